from django.contrib import admin
from django.utils.html import format_html

from .live import sim_query
from .models import Scenario


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "slots", "step_ms", "growth", "levels", "slo_ms", "simulator_link")
    search_fields = ("name", "slug", "description")
    prepopulated_fields = {"slug": ("name",)}
    fieldsets = (
        (None, {"fields": ("name", "slug", "description")}),
        ("The practice server", {"fields": ("slots", "step_ms", "growth", "prefill_tok_s")}),
        (
            "The sweep",
            {"fields": ("levels", "max_tokens", "slo_ms", "request_overhead_ms", "token_overhead_ms")},
        ),
    )

    @admin.display(description="simulator")
    def simulator_link(self, scenario: Scenario) -> str:
        try:
            query = sim_query(scenario.sweep_params())
        except ValueError:
            return "—"
        return format_html('<a href="/sim/?{}">open</a>', query)
