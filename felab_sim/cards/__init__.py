"""What felab_sim hands the lessons' cards: its content files' sections (``content_files``) and
what a card computes from its rows (``for_cards``), carried by FelabSimConfig so lessons never
imports the pages.
"""
