"""felab_sim's charts: figures described as plotly JSON, and drawn as SVG on the server.

Draws what the engine computes and imports nothing of Django (docs/architecture.md, "The engine
boundary").
"""
