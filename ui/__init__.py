"""The Streamlit side: each lesson's controls, sections and cached calls (ui/<stem>.py, or the package ui/<stem>/ for a
larger lesson: its page.py first), and what every page shares in ui/shared/ (page furniture, figures, language, links,
process start-up)."""
