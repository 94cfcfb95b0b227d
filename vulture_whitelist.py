"""Names used where vulture (the dead-code check of ./dev test, [tool.vulture] in pyproject.toml)
cannot see them. Each group says how it is used; a name belongs here only for such a reason."""
# ruff: noqa

# Named by strings: a Benchmark value's extras.lazy(module, name), models/registry.BACKENDS,
# `--model python:MODULE:CLASS` specs and a checkpoint's config.json "architectures".
resolve_declared  # benchmarks/custom/__init__.py
export_source  # benchmarks/custom/__init__.py
knob_figures  # benchmarks/fourd/__init__.py
build_anthropic  # models/registry.py
build_blind  # models/registry.py
build_gemini  # models/registry.py
build_openai  # models/registry.py
build_openai_compat  # models/registry.py
OwnChatModel  # docs/reproducing-papers.md
CostlyStart  # tests/runner/test_run.py
TinyOwnVL  # tests/tiny_own_code.py

# Called by a library through an interface it defines: argparse.Action.__call__'s and a signal
# handler's parameters, nltk's WordNet reader, pydantic fields read through the model.
option_string  # argparse.Action.__call__
signum  # signal handler
map_wn  # nltk WordNetCorpusReader
_.schema_version  # report/schema.py: every results file's field
_.raw_output_cut  # report/schema.py
_.created  # report/schema.py
_.seeds  # report/schema.py
_.n_items  # annotate/progress.TaskProgress, shown as JSON
_.withdrawn  # annotate/progress.TaskProgress
_.assigned  # annotate/progress.TaskProgress
_.model_input_names  # tests/video_stand_in.py: what transformers reads of a processor
fake_vllm  # tests: a pytest fixture requested by its name

# Set on another library's objects, which read them: sqlite3, numpy, PyAV, onnxruntime,
# uvicorn, Blender, tokenizers, functions' names.
_.row_factory
_.writeable
_.thread_type
_.thread_count
_.pict_type
_.intra_op_num_threads
_.log_severity_level
_.should_exit
_.pre_tokenizer
_.__qualname__
_.lens
_.sensor_fit
_.sensor_width
_.resolution_x
_.resolution_y
_.resolution_percentage  # Blender's render settings (benchmarks/fourd/curate/blender_scene.py)
_.film_transparent
_.file_format
_.color_mode
_.view_transform
_.threads_mode
_.use_denoising
_.use_adaptive_sampling
_.taa_render_samples
_.color
_.energy
_.rotation_euler
_.compute_device_type
_.filepath
_.max_new_tokens  # transformers' GenerationConfig (models/hf_runtime.py)
_.do_sample
_.top_k
