"""The framework's floor: a Streamlit page with a single st.write, benchmarked beside the app."""

import streamlit as st

st.write("Hello")
