"""Publishing what vidbench reads: `vidbench export DIR --to hf OUT` writes a benchmark's data
as a folder the Hugging Face `datasets` library loads (hf.py, card.py, construction.py;
docs/export.md). Reading such a folder back is tasks/exported.py's."""
