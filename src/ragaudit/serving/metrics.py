"""The service's counters in the Prometheus text format (version 0.0.4), without a client library.

Families (``tenant`` is the tenant of the key, ``-`` when the request had no valid key; a tenant id a
request names is never a label, so hostile ids cannot grow the series):

- ``ragaudit_serve_requests_total{tenant, status}``: answered ``POST /search`` requests;
- ``ragaudit_serve_request_duration_seconds{tenant}``: a histogram of their latency;
- ``ragaudit_serve_errors_total{tenant, reason}``: refused or failed requests by reason
  (``unauthenticated``, ``tenant-mismatch``, ``bad-request``, ``too-large``, ``timeout``, ``internal``);
- ``ragaudit_serve_results_total{tenant}``: chunks returned.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import defaultdict

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
NO_TENANT = "-"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


class ServeMetrics:
    """Counters and a latency histogram per tenant; thread-safe, rendered by :meth:`text`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[tuple[str, int], int] = defaultdict(int)
        self.errors: dict[tuple[str, str], int] = defaultdict(int)
        self.results: dict[str, int] = defaultdict(int)
        self.buckets: dict[str, list[int]] = {}
        self.sums: dict[str, float] = defaultdict(float)

    def observe(self, tenant: str | None, status: int, seconds: float, results: int = 0) -> None:
        who = tenant or NO_TENANT
        with self._lock:
            self.requests[(who, status)] += 1
            counts = self.buckets.setdefault(who, [0] * (len(BUCKETS) + 1))
            counts[bisect_left(BUCKETS, seconds)] += 1
            self.sums[who] += seconds
            self.results[who] += results

    def error(self, tenant: str | None, reason: str) -> None:
        with self._lock:
            self.errors[(tenant or NO_TENANT, reason)] += 1

    def text(self) -> str:
        with self._lock:
            lines = [
                "# HELP ragaudit_serve_requests_total Search requests answered, by tenant and HTTP status.",
                "# TYPE ragaudit_serve_requests_total counter",
            ]
            for (tenant, status), n in sorted(self.requests.items()):
                lines.append(
                    f'ragaudit_serve_requests_total{{tenant="{_label(tenant)}",status="{status}"}} {n}'
                )
            lines += [
                "# HELP ragaudit_serve_request_duration_seconds Search request latency in seconds.",
                "# TYPE ragaudit_serve_request_duration_seconds histogram",
            ]
            for tenant, counts in sorted(self.buckets.items()):
                t = _label(tenant)
                running = 0
                for bound, n in zip((*BUCKETS, float("inf")), counts, strict=True):
                    running += n
                    le = "+Inf" if bound == float("inf") else _number(bound)
                    lines.append(
                        f'ragaudit_serve_request_duration_seconds_bucket{{tenant="{t}",le="{le}"}} {running}'
                    )
                lines.append(
                    f'ragaudit_serve_request_duration_seconds_sum{{tenant="{t}"}} {self.sums[tenant]!r}'
                )
                lines.append(f'ragaudit_serve_request_duration_seconds_count{{tenant="{t}"}} {running}')
            lines += [
                "# HELP ragaudit_serve_errors_total Search requests refused or failed, by tenant and reason.",
                "# TYPE ragaudit_serve_errors_total counter",
            ]
            for (tenant, reason), n in sorted(self.errors.items()):
                lines.append(
                    f'ragaudit_serve_errors_total{{tenant="{_label(tenant)}",reason="{reason}"}} {n}'
                )
            lines += [
                "# HELP ragaudit_serve_results_total Chunks returned, by tenant.",
                "# TYPE ragaudit_serve_results_total counter",
            ]
            for tenant, n in sorted(self.results.items()):
                lines.append(f'ragaudit_serve_results_total{{tenant="{_label(tenant)}"}} {n}')
        return "\n".join(lines) + "\n"
