"""The Streamlit side: each lesson's controls, sections and cached calls (ui/<stem>.py), and the pieces every page
shares (ui/shared/common.py, ui/shared/display.py, ui/shared/figures.py), with process start-up in ui/shared/startup.py."""
