"""The Streamlit side: each lesson's controls, sections and cached calls (ui/<stem>.py), and the pieces every page
shares (ui/common.py, ui/display.py, ui/figures.py), with process start-up in ui/startup.py."""
