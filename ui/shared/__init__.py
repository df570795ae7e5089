"""What every page shares: read common.py first (translator, page_header, what_to_try, predict_then_reveal,
guarded_fragment, the bad-input helpers). display.py and figures.py bring a figure to the screen (built once, cached;
presenter mode); links.py keeps choices in the URL; i18n.py is the Translator; startup.py is what a process does
once; streamlit_compat.py holds every use of Streamlit's internals; word_vectors.py gives lessons 5 and 7 their
GloVe-or-random sentence vectors."""
