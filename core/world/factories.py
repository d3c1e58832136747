"""Default factories for pydantic fields: ``Field(default_factory=empty_list)`` rather than
``default_factory=list``.

Why: when a model class is built, pydantic asks ``inspect.signature`` whether each default factory takes the
validated data. For the builtin ``list`` that means parsing its text signature (~0.6 ms a field; about 40
such fields are built on every run's path), for a plain function it reads the code object (~0.04 ms).
Behaviour is the same: a new empty list per instance, and the JSON schema shows no default, as with
``list``. (``dict`` and ``set`` fail fast in ``inspect.signature``, so they stay as they are.)
"""


def empty_list() -> list:
    return []
