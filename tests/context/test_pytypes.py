"""Python types as the code writes them down (``repomem.context.pytypes``): the class an
annotation names, what a function is annotated to return, and what an attribute holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from repos import write_files

from repomem.config import IndexConfig
from repomem.context.pytypes import _SELF_ATTR, PythonTypes, annotation_type
from repomem.index.parsing import parse_source
from repomem.index.repo import RepoIndex

CARS = """\
from typing import Optional, Self

from pkg.parts import Engine


class Wheels:
    def spin(self):
        return 4


class Car:
    engine: Engine

    def __init__(self):
        self.wheels = Wheels()
        self.mixed = Wheels()
        self.mixed = Engine()

    def tuned(self) -> Self:
        return self


def make() -> Car:
    return Car()


def maybe() -> Optional["Car"]:
    return None


def either() -> Car | Engine:
    return Car()


def count() -> int:
    return 1
"""
PARTS = "class Engine:\n    def start(self):\n        return True\n"


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("Foo", ("Foo",)),
        ("mod.Foo", ("mod", "Foo")),
        ("'Foo'", ("Foo",)),
        ("Optional[Foo]", ("Foo",)),
        ("typing.Optional[mod.Foo]", ("mod", "Foo")),
        ("Foo | None", ("Foo",)),
        ("Foo[int]", ("Foo",)),
        ("list[Foo]", ("list",)),
        ("Annotated[Foo, 'unit']", ("Foo",)),
        ("Foo | Bar", None),
        ("'not a name'", None),
        ("", None),
    ],
)
def test_the_class_an_annotation_names(text: str, parts: tuple[str, ...] | None) -> None:
    assert annotation_type(text) == parts


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> RepoIndex:
    root = write_files(
        tmp_path_factory.mktemp("cars"), {"pkg/cars.py": CARS, "pkg/parts.py": PARTS}
    )
    built, _ = RepoIndex.build(root, IndexConfig(index_dir=str(root.parent / "idx")), save=False)
    return built


def _def(name: str) -> int:
    pf = parse_source("pkg/cars.py", "python", CARS, "x")
    return next(d.node for d in pf.definitions if d.name == name)


def test_return_annotations_name_repository_classes(index: RepoIndex) -> None:
    types = PythonTypes()
    car = ("pkg/cars.py", "Car")
    assert types.returns(index, "pkg/cars.py", _def("make")) == car
    assert types.returns(index, "pkg/cars.py", _def("maybe")) == car
    assert types.returns(index, "pkg/cars.py", _def("Car.tuned")) == car  # Self
    assert types.returns(index, "pkg/cars.py", _def("either")) is None  # two classes
    assert types.returns(index, "pkg/cars.py", _def("count")) is None  # not the repository's


def test_classes_by_name_follow_the_files_imports(index: RepoIndex) -> None:
    types = PythonTypes()
    assert types.class_named(index, "pkg/cars.py", ("Engine",)) == ("pkg/parts.py", "Engine")
    assert types.class_named(index, "pkg/cars.py", ("make",)) is None  # a function


def test_attributes_hold_what_the_class_writes_down(index: RepoIndex) -> None:
    types = PythonTypes()
    car = ("pkg/cars.py", "Car")
    assert types.attribute(index, car, "engine") == ("pkg/parts.py", "Engine")  # annotated
    assert types.attribute(index, car, "wheels") == ("pkg/cars.py", "Wheels")  # assigned
    assert types.attribute(index, car, "mixed") is None  # two classes
    assert types.attribute(index, car, "absent") is None


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    root = write_files(tmp_path / "r", {"pkg/cars.py": CARS, "pkg/parts.py": PARTS})
    built, _ = RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "idx")), save=False)
    types = PythonTypes()
    car = ("pkg/cars.py", "Car")
    assert types.attribute(built, car, "wheels") == ("pkg/cars.py", "Wheels")
    built.update_file(
        "pkg/cars.py", CARS.replace("self.wheels = Wheels()", "self.wheels = Engine()")
    )
    assert types.attribute(built, car, "wheels") == ("pkg/parts.py", "Engine")


@pytest.mark.parametrize(
    ("line", "groups"),
    [
        ("        self.wheels = Wheels()", ("wheels", None, "Wheels()")),
        ("        self.engine: Engine = make()", ("engine", "Engine", "make()")),
        ("        self.engine_2: Engine", ("engine_2", "Engine", None)),
        ("        self.count", ("count", None, None)),
        ("        self.assertEqual(first, second)", None),  # a call, not an attribute
        ("        self.count == 3", None),
        ("        self.a.b = 1", None),
        ("    x = self.y", None),
    ],
)
def test_an_attribute_of_self_is_read_from_its_line(
    line: str, groups: tuple[str, str | None, str | None] | None
) -> None:
    m = _SELF_ATTR.match(line)
    assert (m["name"], m["annot"], m["value"]) == groups if m else groups is None


GARAGE = '''\
from pkg.parts import Engine


class Garage:
    """Holds cars.

    self.fake = Engine()  (a docstring's line at the body's indentation is read as code)
    """

    spare: Engine
    # door: Engine

    def __init__(self, motor: Engine, count):
        self.assertEqual(count, 1)
        self.motor = motor
        if count:
            self.backup: Engine = make()
        self.count = count

    class Inner:
        hidden: Engine

        def run(self):
            self.inner = Engine()
''' + "".join(f"\\n    def check_{i}(self):\\n        self.assertTrue({i})\\n" for i in range(40))


def test_attributes_are_read_from_the_lines_that_can_hold_them(tmp_path: Path) -> None:
    """A large class's body is searched for the lines that may assign an attribute or are
    indented as its body, and reads as it did line by line: a parameter's annotation through
    the method assigning it, annotations at the body's level only, every ``self.`` line."""
    root = write_files(tmp_path / "r", {"pkg/garage.py": GARAGE, "pkg/parts.py": PARTS})
    built, _ = RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "idx")), save=False)
    types, garage, engine = PythonTypes(), ("pkg/garage.py", "Garage"), ("pkg/parts.py", "Engine")
    for name in ("spare", "motor", "backup", "inner", "fake"):
        assert types.attribute(built, garage, name) == engine, name
    for name in ("door", "hidden", "count", "assertEqual", "assertTrue"):
        assert types.attribute(built, garage, name) is None, name
