"""Analyses over finished runs that belong to no single benchmark (e.g. the error taxonomy)."""
