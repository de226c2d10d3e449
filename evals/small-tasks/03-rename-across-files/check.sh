#!/bin/sh
# Passes (exit 0) when the task is done.
set -e
python3 test_report.py && ! grep -q calc_area geometry.py shapes.py report.py
