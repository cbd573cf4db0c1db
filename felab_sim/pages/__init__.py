"""The simulator's pages: the sweep at /sim/ (``sim_views``), the calculators (``calc_views``,
each page built by ``calculator_page``), the chain (``chain_views``) and the engine
(``engine_views``); their forms, a paste carried in a POST body (``pastes``), the links that carry
one page's settings to another (``same_settings_links``) and the host's simulation permits every
page's work runs under (``permits``). They adapt; the engine computes.
"""
