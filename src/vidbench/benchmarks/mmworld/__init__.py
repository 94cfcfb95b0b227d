"""MMWorld (papers/003): multi-discipline, multi-faceted video QA."""
