import streamlit as st
st.title("under construction")
