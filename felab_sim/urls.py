from django.urls import path

from . import prefix_runs
from .pages import calc_views, chain_views, engine_views, sim_views

urlpatterns = [
    path("", sim_views.sim_page, name="sim"),
    path("sweep.json", sim_views.sweep_json, name="sweep_json"),
    path("engine/", engine_views.engine_page, name="engine_page"),
    path("engine.json", engine_views.engine_json, name="engine_json"),
    path("chain/", chain_views.chain_page, name="chain_page"),
    path("chain.json", chain_views.chain_json, name="chain_json"),
    path("chain/steps/<slug:key>/", chain_views.chain_step, name="chain_step"),
    path("calc/<slug:name>.json", calc_views.calc_json, name="calc_json"),
    path("calc/<slug:name>/", calc_views.calc_page, name="calc_page"),
    path("calc/prefix-cache/runs/", prefix_runs.prefix_cache_run_start, name="prefix_cache_run_start"),
    path("runs/", sim_views.run_start, name="sweep_run_start"),
    path("runs/<int:run_id>/", sim_views.run_detail, name="run"),
]
