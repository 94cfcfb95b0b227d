"""4D-Bench caption metrics (Table 2): n-gram metrics as the official script computes them
(ngram.py, cider.py, ptb.py), the COCO corpus evaluation (coco.py), embedding metrics
(embedding.py), the GPT judges (gpt_judges.py, gpt_prompts.py), the Human row (rows.py), the
table's columns (table.py), all of them for a whole set in one call (metrics.py)."""
