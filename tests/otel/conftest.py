"""OpenTelemetry tests: the SDK's in-memory span exporter and metric reader, installed once as
the process's global providers (OpenTelemetry allows setting them once), emptied per test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

EXPORTER = InMemorySpanExporter()
READER = InMemoryMetricReader()
_tp = TracerProvider()
_tp.add_span_processor(SimpleSpanProcessor(EXPORTER))
trace.set_tracer_provider(_tp)
metrics.set_meter_provider(MeterProvider(metric_readers=[READER]))


class Telemetry:
    """What the instrumentation recorded, as the SDK exports it."""

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        return [s for s in EXPORTER.get_finished_spans() if name is None or s.name == name]

    def span(self, name: str) -> ReadableSpan:
        found = self.spans(name)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        """Metric name -> [(attributes, value or histogram count)] of the points collected now."""
        out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        data = READER.get_metrics_data()
        for rm in data.resource_metrics if data else ():
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    points = out.setdefault(m.name, [])
                    for p in m.data.data_points:
                        points.append((dict(p.attributes), getattr(p, "count", getattr(p, "value", None))))
        return out

    def exported_text(self) -> str:
        """Every span and metric point as the SDK serialises them (to search for secrets)."""
        spans = [s.to_json() for s in EXPORTER.get_finished_spans()]
        data = READER.get_metrics_data()
        return "\n".join(spans) + "\n" + (data.to_json() if data else "")

    def value(self, name: str, **attrs: Any) -> Any:
        """The value (sum, or histogram count) of metric ``name`` summed over points whose
        attributes include ``attrs`` (dots in keys written as __)."""
        want = {k.replace("__", "."): v for k, v in attrs.items()}
        total = 0
        for point_attrs, value in self.metrics().get(name, []):
            if all(point_attrs.get(k) == v for k, v in want.items()):
                total += value
        return total


@pytest.fixture
def otel() -> Iterator[Telemetry]:
    EXPORTER.clear()
    yield Telemetry()
    EXPORTER.clear()


def dump(obj: Any) -> str:
    return json.dumps(obj, default=str)
