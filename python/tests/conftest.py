"""Shared pytest options for the qdq Python tests."""

from __future__ import annotations


def pytest_addoption(parser):
    parser.addoption(
        "--qdq-sweep",
        action="store_true",
        default=False,
        help="run the large (10x) differential sweep against onnx.reference",
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for line in getattr(config, "_qdq_summary_lines", []):
        terminalreporter.write_line(line)
