"""Presentation: text tables, compare tables, HTML pages and charts, `show`."""
