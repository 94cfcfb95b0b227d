"""The annotation app's web layer (FastAPI + Jinja2, everything served from the package)."""
