"""Streamlit-side helpers shared by the pages: language, text, shared widgets, cached resources."""
