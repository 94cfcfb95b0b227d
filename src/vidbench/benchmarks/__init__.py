"""One folder per benchmark: everything a benchmark needs (loader, tasks, scoring, curation)."""
