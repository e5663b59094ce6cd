"""SAVIGP (Dezfouli & Bonilla, NIPS 2015): see model.py."""
