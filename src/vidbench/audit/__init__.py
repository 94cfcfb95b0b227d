"""`vidbench audit`: what the runs of one benchmark say about its items (a gold that is likely
wrong, items blind runs answer, items that tell models apart no better than a coin, near
duplicates, letter position bias) and how many items a benchmark needs (sizing).

It reads finished runs (report/, runner/run_config, tasks/) and sits beside analyze/ and view/;
docs/audit.md says how to read each flag.
"""
