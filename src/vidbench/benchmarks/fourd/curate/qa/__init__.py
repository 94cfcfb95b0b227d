"""`curate 4d qa` and `curate 4d captions` (4D-Bench part 2, issue 14)."""
