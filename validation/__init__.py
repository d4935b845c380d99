"""Validation: pysdcmicro against published tables.

``python -m validation`` reruns each reproduction and writes ``docs/validation.md`` (the
documentation's "Validation against published tables" page): every reference value with its
source, our value on the same data and settings, and the difference.
"""
