"""MMWorld (MMWorld paper): multi-discipline, multi-faceted video QA."""
