from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET


@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for load balancers, and the trivial view that benchmarks compare pages with."""
    return HttpResponse("ok", content_type="text/plain")
