"""Java resolution (``repomem.index.langs.java``): call edges and the cursor's names resolve
through packages, imports and the class hierarchy, and stay exact under updates."""

from __future__ import annotations

from pathlib import Path

import pytest
from repos import write_files
from test_index import assert_same

from repomem.context.definitions import find_definitions, resolve_names
from repomem.index.langs import for_language
from repomem.index.langs.java import FIELD, RESULT
from repomem.index.parsing import parse_source
from repomem.index.repo import RepoIndex

MAIN = "src/main/java/com/acme"
APP = f"{MAIN}/app/App.java"

FILES: dict[str, str] = {
    f"{MAIN}/shapes/Shape.java": """\
package com.acme.shapes;

public interface Shape {
    double area();
}
""",
    f"{MAIN}/shapes/Box.java": """\
package com.acme.shapes;

public class Box implements Shape {
    private final int side;

    public Box(int side) {
        this.side = side;
    }

    public Box(int side, int scale) {
        this(side * scale);
    }

    public double area() {
        return side * side;
    }

    public double area(int times) {
        return area() * times;
    }

    public static Box unit() {
        return new Box(1);
    }

    public static class Lid {
        public void close() {
        }
    }
}
""",
    f"{MAIN}/shapes/Color.java": """\
package com.acme.shapes;

public enum Color {
    RED, GREEN;

    public Color next() {
        return GREEN;
    }
}
""",
    f"{MAIN}/util/Strings.java": """\
package com.acme.util;

public final class Strings {
    public static String pad(String s) {
        return s;
    }

    public static String trimAll(String s) {
        return s;
    }
}
""",
    f"{MAIN}/util/Point.java": """\
package com.acme.util;

public record Point(int x, int y) {
    public int sum() {
        return x + y;
    }
}
""",
    f"{MAIN}/util/Marker.java": """\
package com.acme.util;

public @interface Marker {
}
""",
    # a repository type named like a JDK one: a file importing java.util.List never gets it
    f"{MAIN}/util/List.java": """\
package com.acme.util;

public class List {
    public int size() {
        return 0;
    }
}
""",
    f"{MAIN}/app/BaseApp.java": """\
package com.acme.app;

public abstract class BaseApp {
    protected void start() {
    }

    public void log(String message) {
    }
}
""",
    APP: """\
package com.acme.app;

import com.acme.shapes.Box;
import com.acme.shapes.*;
import com.acme.util.Point;
import static com.acme.util.Strings.pad;
import static com.acme.util.Strings.*;
import java.lang.reflect.Field;
import java.util.List;

public class App extends BaseApp {
    private Box box = new Box(2);

    public void run(Shape shape) {
        start();
        this.log("x");
        super.start();
        double a = shape.area();
        Box b = Box.unit();
        var lid = new Box.Lid();
        lid.close();
        this.box.area();
        String p = pad("a");
        String q = trimAll("b");
        Color c = Color.RED.next();
        Point point = new Point(1, 2);
        int s = point.sum();
        Field f = null;
        List<String> items = null;
        int n = items.size();
        Object reader = null;
        reader.hashCode();
    }
}
""",
    "src/test/java/com/acme/app/AppTest.java": """\
package com.acme.app;

class AppTest {
    private interface Field {
    }

    void reader() {
    }

    static void onlyInTests() {
    }

    void check() {
        onlyInTests();
    }
}
""",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> RepoIndex:
    root = write_files(tmp_path_factory.mktemp("java"), FILES)
    idx, _ = RepoIndex.build(root, save=False)
    return idx


def _line(path: str, text: str) -> int:
    """0-based line of the first line of ``FILES[path]`` holding ``text``."""
    return next(i for i, line in enumerate(FILES[path].splitlines()) if text in line)


def _edges(idx: RepoIndex, path: str) -> set[tuple[int, str, str]]:
    """(0-based line of the calling statement, callee file, callee qualified name)."""
    pf = idx.tables.parsed[path]
    return {
        (int(pf.node_start[src]), target, idx.resolver.qualnames[target][node])
        for src, target, node in idx.tables.calls[path]
    }


def _callee(idx: RepoIndex, path: str, text: str) -> set[tuple[str, str]]:
    line = _line(path, text)
    return {(t, q) for row, t, q in _edges(idx, path) if row == line}


@pytest.mark.parametrize(
    ("text", "callee", "why"),
    [
        ("new Box(2)", (f"{MAIN}/shapes/Box.java", "Box"), "a constructor is its class"),
        ("start();", (f"{MAIN}/app/BaseApp.java", "BaseApp.start"), "inherited, unqualified"),
        ('this.log("x")', (f"{MAIN}/app/BaseApp.java", "BaseApp.log"), "this. through extends"),
        ("super.start()", (f"{MAIN}/app/BaseApp.java", "BaseApp.start"), "super."),
        ("shape.area()", (f"{MAIN}/shapes/Shape.java", "Shape.area"), "parameter's type"),
        ("Box.unit()", (f"{MAIN}/shapes/Box.java", "Box.unit"), "static method"),
        ("new Box.Lid()", (f"{MAIN}/shapes/Box.java", "Box.Lid"), "nested class"),
        ("lid.close()", (f"{MAIN}/shapes/Box.java", "Box.Lid.close"), "var x = new Foo()"),
        ("this.box.area()", (f"{MAIN}/shapes/Box.java", "Box.area"), "field's type"),
        ('pad("a")', (f"{MAIN}/util/Strings.java", "Strings.pad"), "static import"),
        ('trimAll("b")', (f"{MAIN}/util/Strings.java", "Strings.trimAll"), "static import *"),
        ("Color.RED.next()", None, "a field's method: its type is not known"),
        ("new Point(1, 2)", (f"{MAIN}/util/Point.java", "Point"), "record"),
        ("point.sum()", (f"{MAIN}/util/Point.java", "Point.sum"), "local's type"),
        ("items.size()", None, "java.util.List is not the repository's List"),
        ("reader.hashCode()", None, "a JDK method"),
    ],
)
def test_call_edges(index: RepoIndex, text: str, callee: tuple[str, str] | None, why: str) -> None:
    assert _callee(index, APP, text) == ({callee} if callee else set()), why


def test_definitions_are_qualified_and_types_are_classes(index: RepoIndex) -> None:
    box = index.tables.parsed[f"{MAIN}/shapes/Box.java"]
    names = [(d.name, d.is_class) for d in box.definitions]
    assert names == [
        ("Box", True),
        ("Box.Box", False),
        ("Box.Box", False),
        ("Box.area", False),
        ("Box.area", False),
        ("Box.unit", False),
        ("Box.Lid", True),
        ("Box.Lid.close", False),
    ]
    kinds = {
        d.name: d.is_class
        for p in ("shapes/Color", "util/Point", "util/Marker", "shapes/Shape")
        for d in index.tables.parsed[f"{MAIN}/{p}.java"].definitions
    }
    assert kinds["Color"] and kinds["Point"] and kinds["Marker"] and kinds["Shape"]
    assert index.tables.parsed[APP].package == "com.acme.app"
    # supertypes, then the class types of fields and of methods' results
    assert index.tables.parsed[APP].bases == {"App": [("BaseApp",), (FIELD, "box", "Box")]}
    assert box.bases == {"Box": [("Shape",), (RESULT, "unit", "Box")]}


def test_overloads_are_one_target_their_first_declaration(index: RepoIndex) -> None:
    path = f"{MAIN}/shapes/Box.java"
    first = next(d.node for d in index.tables.parsed[path].definitions if d.name == "Box.area")
    (hit,) = [
        e for e in index.tables.calls[APP] if index.resolver.qualnames[e[1]][e[2]] == "Box.area"
    ]
    assert hit[1:] == (path, first)


def test_imports_become_bindings() -> None:
    pf = parse_source("A.java", "java", FILES[APP], "d")
    assert [tuple(b) for b in pf.imports] == [
        ("Box", "com.acme.shapes.Box", "Box", 0),
        ("com.acme.shapes.*", "com.acme.shapes", "*", 0),
        ("Point", "com.acme.util.Point", "Point", 0),
        ("pad", "com.acme.util.Strings", "pad", 1),
        ("com.acme.util.Strings.*", "com.acme.util.Strings", "*", 1),
        ("Field", "java.lang.reflect.Field", "Field", 0),
        ("List", "java.util.List", "List", 0),
    ]


def _at(text: str) -> str:
    """``App.java`` up to the start of the line holding ``text`` (the cursor's line)."""
    lines = FILES[APP].splitlines()
    row = _line(APP, text)
    return "\n".join(lines[:row] + [lines[row][: len(lines[row]) - len(lines[row].lstrip())]])


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("shape.area", (f"{MAIN}/shapes/Shape.java", "Shape.area")),
        ("Box", (f"{MAIN}/shapes/Box.java", "Box")),
        ("Box.unit", (f"{MAIN}/shapes/Box.java", "Box.unit")),
        ("Box.Lid", (f"{MAIN}/shapes/Box.java", "Box.Lid")),
        ("lid.close", (f"{MAIN}/shapes/Box.java", "Box.Lid.close")),
        ("this.log", (f"{MAIN}/app/BaseApp.java", "BaseApp.log")),
        ("super.start", (f"{MAIN}/app/BaseApp.java", "BaseApp.start")),
        ("this.box.area", (f"{MAIN}/shapes/Box.java", "Box.area")),
        ("start", (f"{MAIN}/app/BaseApp.java", "BaseApp.start")),
        ("pad", (f"{MAIN}/util/Strings.java", "Strings.pad")),
        ("trimAll", (f"{MAIN}/util/Strings.java", "Strings.trimAll")),
        ("Color", (f"{MAIN}/shapes/Color.java", "Color")),
        ("point.sum", (f"{MAIN}/util/Point.java", "Point.sum")),
        ("com.acme.util.Strings.pad", (f"{MAIN}/util/Strings.java", "Strings.pad")),
        ("com.acme.util.Strings", (f"{MAIN}/util/Strings.java", "Strings")),
        # never: a JDK type imported, java.lang, a keyword, a local, a test's definitions
        ("Field", None),
        ("List", None),
        ("items.size", None),
        ("String", None),
        ("Object", None),
        ("int", None),
        ("reader", None),
        ("onlyInTests", None),
        ("x.onlyInTests", None),
    ],
)
def test_names_at_the_cursor(index: RepoIndex, name: str, target: tuple[str, str] | None) -> None:
    (found,) = resolve_names(index, APP, _at("reader.hashCode()"), [name])
    assert (found[:2] if found else None) == target


def test_cards_carry_no_test_definitions_and_no_jdk_names(index: RepoIndex) -> None:
    hits = find_definitions(index, APP, _at("reader.hashCode()"))
    shown = {(h.card.path, h.card.name) for h in hits}
    assert (f"{MAIN}/shapes/Box.java", "Box.Lid.close") in shown
    assert not any(path.startswith("src/test/") for path, _ in shown)
    assert not any(name in ("List", "List.size", "Field") for _, name in shown)


def test_an_unknown_receiver_is_a_labelled_guess_outside_tests(index: RepoIndex) -> None:
    left = _at("reader.hashCode()") + "var made = build();\n        "
    (found,) = resolve_names(index, APP, left, ["made.sum"])
    assert found is not None and found[:2] == (f"{MAIN}/util/Point.java", "Point.sum")
    hits = find_definitions(index, APP, left + "made.sum();\n")
    assert any(h.how.endswith("guess: the only method so named") for h in hits)
    # a test's method is never guessed for code outside tests, nor a JDK method name
    assert resolve_names(index, APP, left, ["made.onlyInTests", "made.size"]) == [None, None]


def test_a_field_read_is_not_the_method_of_that_name(tmp_path: Path) -> None:
    files = {
        "a/Builder.java": "package a;\n\npublic class Builder {\n    String indent;\n\n"
        "    public Builder indent(String s) {\n        return this;\n    }\n}\n",
    }
    root = write_files(tmp_path, files)
    idx, _ = RepoIndex.build(root, save=False)
    left = "package a;\n\nclass Use {\n    void f(Builder builder) {\n"
    read = left + "        String x = builder.indent;\n        "
    call = left + "        builder.indent"
    assert resolve_names(idx, "a/Builder.java", read, ["builder.indent"]) == [None]
    (found,) = resolve_names(idx, "a/Builder.java", call, ["builder.indent"])
    assert found is not None and found[1] == "Builder.indent"


def test_reserved_names() -> None:
    java = for_language("java")
    for name in ("int", "new", "null", "String", "Object", "Integer", "Override", "var"):
        assert java.reserved(name), name
    for name in ("Box", "Field", "Module", "helper", "this", "super"):
        assert not java.reserved(name), name


def _calls(idx: RepoIndex) -> dict[str, list]:
    return {
        p: sorted({(src, t, idx.resolver.qualnames[t][n]) for src, t, n in c})
        for p, c in idx.tables.calls.items()
        if c
    }


BOX = FILES[f"{MAIN}/shapes/Box.java"]
# an overload before the first: the target node of ``box.area()`` moves
BOX_1 = BOX.replace(
    "    public double area() {",
    "    public double area(long t) {\n        return t;\n    }\n\n    public double area() {",
)
# an import line, for a wildcard import to take its place without moving anything
BOX_2 = BOX_1.replace("package com.acme.shapes;\n", "package com.acme.shapes;\n\nimport a.B;\n")
LID = "public static class Lid {"
# the nested class gains a base of its package, then one that a wildcard import brings
BOX_3 = BOX_2.replace(LID, "public static class Lid extends Hinge {")
BOX_4 = BOX_2.replace(LID, "public static class Lid extends Hinge implements Latch {")
BOX_5 = BOX_4.replace("import a.B;", "import com.acme.util.*;")

EDITS: list[tuple[str, str | None]] = [
    (f"{MAIN}/shapes/Box.java", BOX_1),
    # the base class loses ``start``: the inherited calls go
    (f"{MAIN}/app/BaseApp.java", FILES[f"{MAIN}/app/BaseApp.java"].replace("start", "begin")),
    # calls of what the nested class ``Box.Lid`` will inherit
    (
        APP,
        FILES[APP].replace(
            "lid.close();", "lid.close();\n        lid.open();\n        lid.shut();"
        ),
    ),
    (f"{MAIN}/shapes/Box.java", BOX_2),
    (
        f"{MAIN}/shapes/Hinge.java",
        "package com.acme.shapes;\n\npublic class Hinge {\n    public void open() {\n    }\n}\n",
    ),
    (
        f"{MAIN}/util/Latch.java",
        "package com.acme.util;\n\npublic interface Latch {\n    default void shut() {\n    }\n}\n",
    ),
    (f"{MAIN}/shapes/Box.java", BOX_3),
    (f"{MAIN}/shapes/Box.java", BOX_4),
    (f"{MAIN}/shapes/Box.java", BOX_5),
    (f"{MAIN}/shapes/Box.java", BOX_4),
    # a class comes to the package: its static method resolves
    (
        f"{MAIN}/app/Helper.java",
        "package com.acme.app;\n\nclass Helper {\n    static void go() {\n    }\n}\n",
    ),
    # the wildcard import goes: ``Color`` and ``Shape`` no longer resolve
    (APP, FILES[APP].replace("import com.acme.shapes.*;\n", "")),
    # Strings moves to another package: the static imports resolve to nothing
    (
        f"{MAIN}/util/Strings.java",
        FILES[f"{MAIN}/util/Strings.java"].replace(
            "package com.acme.util;", "package com.acme.text;"
        ),
    ),
    # a file goes, another comes back
    (f"{MAIN}/shapes/Shape.java", None),
    (f"{MAIN}/app/BaseApp.java", FILES[f"{MAIN}/app/BaseApp.java"]),
    # the types of fields and methods' results: one comes, changes, a body changes, it goes
    (f"{MAIN}/shapes/Box.java", BOX_4.replace(LID, f"private Lid lid;\n\n    {LID}")),
    (f"{MAIN}/shapes/Box.java", BOX_4.replace(LID, f"private Hinge lid;\n\n    {LID}")),
    (
        f"{MAIN}/shapes/Box.java",
        BOX_4.replace(LID, f"private Hinge lid;\n\n    {LID}").replace(
            "return new Box(1);", "return new Box(2);"
        ),
    ),
    (f"{MAIN}/shapes/Box.java", BOX_4.replace("public static Box unit()", "static Lid unit()")),
    (f"{MAIN}/shapes/Box.java", BOX_4),
]


def test_updates_equal_a_rebuild(tmp_path: Path) -> None:
    root = write_files(tmp_path / "r", FILES)
    idx, _ = RepoIndex.build(root, save=False)
    seen = []
    for rel, text in EDITS:
        if rel == APP and text is not None:
            text = text.replace("Box.unit();", "Box.unit();\n        Helper.go();")
        if text is None:
            (root / rel).unlink()
        else:
            write_files(root, {rel: text})
        idx.update_file(rel, text)
        fresh, _ = RepoIndex.build(root, save=False)
        assert _calls(idx) == _calls(fresh), rel
        # supertypes and the types of fields and results, which the cursor's names read
        assert {p: f.bases for p, f in idx.tables.parsed.items()} == {
            p: f.bases for p, f in fresh.tables.parsed.items()
        }, rel
        seen.append(_calls(idx))
    assert_same(idx, fresh, ["lid.close();", "return new Box(1);", "public double area()"])
    # the edits did change what resolves
    assert len({repr(s) for s in seen}) >= 10


def test_receivers_declared_below_a_line_comment_are_typed(index: RepoIndex) -> None:
    left = _at("reader.hashCode()") + "// a comment\n        Box other = b;\n        "
    (found,) = resolve_names(index, APP, left, ["other.area"])  # two ``area``: no guess
    assert found is not None and found[:2] == (f"{MAIN}/shapes/Box.java", "Box.area")


def _far(body: str) -> str:
    """``body`` below a method 60 lines long: what it names is out of the last lines' reach."""
    filler = "".join(f"        int v{i} = {i};\n" for i in range(60))
    return f"    void early() {{\n{body}{filler}    }}\n\n    void late() {{\n        "


def test_the_enclosing_class_supertypes_are_in_scope(index: RepoIndex) -> None:
    # ``App extends BaseApp``: the base's card comes though nothing near the cursor names it
    left = FILES[APP][: FILES[APP].index("    public void run")] + _far("")
    hits = find_definitions(index, APP, left)
    how = {h.card.name: h.how for h in hits}
    assert how.get("BaseApp") == "in scope"


def test_what_the_file_calls_elsewhere_is_a_candidate(tmp_path: Path) -> None:
    # the buffer's file as the index holds it: its calls far above the cursor are candidates,
    # the most called first
    left = FILES[APP][: FILES[APP].index("    public void run")] + _far(
        "        Box.unit();\n        Box.unit();\n        new Point(1, 2).sum();\n"
    )
    root = write_files(tmp_path, {**FILES, APP: left})
    idx, _ = RepoIndex.build(root, save=False)
    hits = find_definitions(idx, APP, left)
    how = {h.card.name: h.how for h in hits}
    assert how.get("Box.unit") == "called in this file (2 calls)"
    assert how.get("Point") == "called in this file (1 call)"
    assert "Box.area" not in how  # called nowhere in the file


MEMBERS: dict[str, str] = {
    "m/Part.java": "package m;\n\npublic class Part {\n    public void run() {\n    }\n}\n",
    "m/Engine.java": (
        "package m;\n\npublic class Engine {\n    public Part part;\n\n"
        "    public Part make() {\n        return part;\n    }\n\n"
        "    public void stop() {\n    }\n\n    public void start() {\n    }\n}\n"
    ),
    "m/Car.java": (
        "package m;\n\npublic class Car extends Engine {\n    private Engine spare;\n\n"
        "    void drive(Engine engine, Object o) {\n"
        + "".join(f"        int v{i} = {i};\n" for i in range(250))
        + "    }\n}\n"
    ),
}


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> RepoIndex:
    root = write_files(tmp_path_factory.mktemp("members"), MEMBERS)
    idx, _ = RepoIndex.build(root, save=False)
    return idx


def _in_drive(extra: str = "") -> str:
    car = MEMBERS["m/Car.java"]
    return car[: car.index("    }\n}\n")] + extra + "        "


PART_RUN = ("m/Part.java", "Part.run")


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("near.part.run", "a field of another file's class"),
        ("spare.part.run", "a field declared more than 200 lines above"),
        ("this.spare.part.run", "this.field through the index's field types"),
        ("part.run", "an inherited field"),
    ],
)
def test_receivers_typed_by_fields_of_other_classes(
    members: RepoIndex, name: str, why: str
) -> None:
    left = _in_drive("        Engine near = engine;\n")
    (found,) = resolve_names(members, "m/Car.java", left, [name])
    assert found is not None and found[:2] == PART_RUN, why


@pytest.mark.parametrize(
    "line",
    [
        "Engine near = engine;\n        near.make().run();\n",  # a method's declared result
        "spare.make().run();\n",
        "((Engine) o).part.run();\n",  # a cast, then a field
        "new Engine().make().run();\n",
    ],
)
def test_calls_on_results_and_casts_bring_their_cards(members: RepoIndex, line: str) -> None:
    hits = find_definitions(members, "m/Car.java", _in_drive("        " + line))
    assert {(h.card.path, h.card.name) for h in hits} >= {PART_RUN}, line


def test_a_buffer_cut_inside_its_class_still_has_its_scope(tmp_path: Path) -> None:
    # the index holds the buffer as the user has it: its class is never closed and a line
    # does not parse, so the parse holds no class around the cursor; the enclosing class and
    # its ``extends`` are read from the text
    left = "package m;\n\nclass Van extends Engine {\n    void go() {\n        int x = (;\n"
    left += "        start();\n        "
    root = write_files(tmp_path, {**MEMBERS, "m/Van.java": left})
    idx, _ = RepoIndex.build(root, save=False)
    (found,) = resolve_names(idx, "m/Van.java", left, ["stop"])
    assert found is not None and found[:2] == ("m/Engine.java", "Engine.stop")


def test_methods_of_one_written_type_share_its_card(members: RepoIndex) -> None:
    left = _in_drive("        Engine e = engine;\n        e.stop();\n        e.start();\n")
    how = {h.card.name: h.how for h in find_definitions(members, "m/Car.java", left)}
    assert "Engine" in how and "Engine.stop" not in how and "Engine.start" not in how


def test_a_lone_methods_type_written_just_above_is_a_card_beside_it(members: RepoIndex) -> None:
    # ``Part.run()`` writes ``Part`` in the last lines: the next line may call another of its
    # methods, which ``Part``'s card names
    left = _in_drive("        Part.run();\n")
    how = {h.card.name: h.how for h in find_definitions(members, "m/Car.java", left)}
    assert how.get("Part") == "owner of run" and "Part.run" in how
    # not written in the last lines (``spare.part``): the code names no ``Part``
    left = _in_drive("        spare.part.run();\n")
    how = {h.card.name: h.how for h in find_definitions(members, "m/Car.java", left)}
    assert "Part.run" in how and "Part" not in how


def test_methods_of_an_unwritten_type_keep_their_cards(tmp_path: Path) -> None:
    # inherited through ``Car``: ``Engine`` is nowhere in the file, a card of it would not
    # be what the code names
    truck = "package m;\n\nclass Truck extends Car {\n    void go() {\n        stop();\n"
    truck += "        start();\n        "
    root = write_files(tmp_path, {**MEMBERS, "m/Truck.java": truck})
    idx, _ = RepoIndex.build(root, save=False)
    how = {h.card.name: h.how for h in find_definitions(idx, "m/Truck.java", truck)}
    assert "Engine.stop" in how and "Engine.start" in how and "Engine" not in how


def test_a_parameter_no_line_uses_yet_puts_its_type_first(members: RepoIndex) -> None:
    # ``tune(Part part, Engine other)``: the body so far calls ``other.stop()`` only; the
    # next line is likely to call a member of ``part``, which nothing names yet
    header = "    }\n\n    void tune(Part part, Engine other) {\n        other.stop();\n"
    hits = find_definitions(members, "m/Car.java", _in_drive(header))
    assert (hits[0].card.path, hits[0].card.name) == ("m/Part.java", "Part")
    # once the body uses it, its type ranks as any other name does
    used = _in_drive(header + "        part.run();\n        other.stop();\n")
    assert find_definitions(members, "m/Car.java", used)[0].card.name != "Part"


VIEWS: dict[str, str] = {
    "v/View.java": (
        "package v;\n\npublic abstract class View {\n"
        "    protected double relative(double v) {\n        return v;\n    }\n\n"
        "    protected void clip() {\n    }\n\n    abstract void draw();\n}\n"
    ),
    "v/Line.java": (
        "package v;\n\npublic class Line extends View {\n    void draw() {\n"
        "        double x = relative(1);\n        clip();\n    }\n}\n"
    ),
    "v/Circle.java": (
        "package v;\n\npublic class Circle extends View {\n    void draw() {\n"
        "        double r = relative(2);\n    }\n}\n"
    ),
    "v/Rect.java": "package v;\n\npublic class Rect extends View {\n    void draw() {\n",
}


def test_a_method_just_begun_gets_what_its_other_implementations_call(tmp_path: Path) -> None:
    # ``Rect.draw`` overrides ``View.draw`` as ``Line.draw`` and ``Circle.draw`` do: both
    # call the inherited ``relative``, which no line of ``Rect`` names yet
    root = write_files(tmp_path, VIEWS)
    idx, _ = RepoIndex.build(root, save=False)
    left = VIEWS["v/Rect.java"] + "        "
    hits = find_definitions(idx, "v/Rect.java", left)
    assert (hits[0].card.name, hits[0].how) == (
        "View.relative",
        "called by 2 other implementations",
    )
    assert "View.clip" not in {h.card.name for h in hits}  # one implementation calls it
    # further into the body, the names written there lead
    deep = left + "".join(f"int v{i} = {i};\n        " for i in range(8))
    assert "View.relative" not in {h.card.name for h in find_definitions(idx, "v/Rect.java", deep)}


def test_a_types_card_standing_for_its_methods_lists_them(tmp_path: Path) -> None:
    # ``Big`` has more methods than a skeleton lists; those the code calls are listed, though
    # the repository calls the others more
    methods = "".join(f"    public void m{i}() {{\n    }}\n\n" for i in range(14))
    calls = "".join(f"        b.m{i}();\n" for i in range(10) for _ in range(3))
    files = {
        "m/Big.java": f"package m;\n\npublic class Big {{\n{methods}}}\n",
        "m/User.java": f"package m;\n\nclass User {{\n    void use(Big b) {{\n{calls}    }}\n}}\n",
        "m/Car.java": "package m;\n\nclass Car {\n    void go(Big big) {\n",
    }
    idx, _ = RepoIndex.build(write_files(tmp_path, files), save=False)
    left = files["m/Car.java"] + "        big.m12();\n        big.m13();\n        "
    (card,) = [h.card for h in find_definitions(idx, "m/Car.java", left) if h.card.name == "Big"]
    lines = files["m/Big.java"].split("\n")
    assert {lines.index("    public void m12() {"), lines.index("    public void m13() {")} <= set(
        card.methods
    )


INHERITED = {
    "v/Base.java": "package v;\n\npublic class Base {\n    double relative(double x) {\n"
    "        return x;\n    }\n\n    void draw() {\n    }\n}\n",
    "v/Shape.java": "package v;\n\npublic class Shape extends Base {\n    void draw() {\n    }\n\n"
    "    void fill() {\n    }\n}\n",
    "v/Group.java": "package v;\n\npublic class Group extends Shape {\n    void draw() {\n",
}


def test_a_supertype_lists_the_methods_it_inherits(tmp_path: Path) -> None:
    # ``Group`` extends ``Shape``, which inherits ``relative`` from ``Base``: no line of
    # ``Group`` names ``Base``, yet a bare ``relative(`` calls it; ``Shape``'s card names it
    # (``draw``, declared by ``Shape`` and by ``Group``, is shown already)
    root = write_files(tmp_path, INHERITED)
    idx, _ = RepoIndex.build(root, save=False)
    hits = find_definitions(idx, "v/Group.java", INHERITED["v/Group.java"] + "        ")
    (card,) = [h.card for h in hits if h.card.name == "Shape"]
    assert card.text.split("\n")[-1] == "// its bases' members: relative"
    assert card.listed == (("v/Base.java", 3),)
    assert "Base" not in {h.card.name for h in hits}


def test_a_supertype_s_inherited_methods_follow_updates(tmp_path: Path) -> None:
    root = write_files(tmp_path, INHERITED)
    idx, _ = RepoIndex.build(root, save=False)
    scale = "    void scale() {\n    }\n\n    void draw"
    text = INHERITED["v/Base.java"].replace("    void draw", scale)
    (root / "v/Base.java").write_text(text)
    idx.update_file("v/Base.java", text)
    rebuilt, _ = RepoIndex.build(root, save=False)
    left = INHERITED["v/Group.java"] + "        "
    for index in (idx, rebuilt):
        hits = find_definitions(index, "v/Group.java", left)
        (card,) = [h.card for h in hits if h.card.name == "Shape"]
        assert card.text.split("\n")[-1] == "// its bases' members: relative, scale"


FACTORY = {
    "v/View.java": "package v;\n\npublic class View {\n}\n",
    **{
        f"v/{name}View.java": f"package v;\n\npublic class {name}View extends View {{\n}}\n"
        for name in ("Rect", "Line", "Marker", "Mask")
    },
    "v/Kind.java": "package v;\n\npublic enum Kind {\n    RNRect, RNLine, RNMarker, RNMask\n}\n",
    "v/Factory.java": "package v;\n\nclass Factory {\n    View make(Kind kind) {\n"
    "        switch (kind) {\n            case RNRect:\n                return new RectView();\n"
    "            case RNLine:\n                return new LineView();\n",
}


def test_a_name_paired_as_the_lines_above_pair_theirs_comes_first(tmp_path: Path) -> None:
    # two cases make ``XView`` of ``RNX``: the next case's ``RNMarker`` makes ``MarkerView``,
    # which no line names
    idx, _ = RepoIndex.build(write_files(tmp_path, FACTORY), save=False)
    left = FACTORY["v/Factory.java"] + "            case RNMarker:\n                "
    hits = find_definitions(idx, "v/Factory.java", left)
    assert hits[0].card.name == "MarkerView"
    assert hits[0].how.startswith("named as the lines above pair their names")
    # one pair is no rule, and a statement ended names nothing to pair
    one = left.replace("            case RNLine:\n                return new LineView();\n", "")
    assert "MarkerView" not in {h.card.name for h in find_definitions(idx, "v/Factory.java", one)}
    done = FACTORY["v/Factory.java"] + "            case RNMarker:\n                x();\n        "
    assert "MarkerView" not in {h.card.name for h in find_definitions(idx, "v/Factory.java", done)}


def test_a_method_called_names_its_type_s_other_methods(tmp_path: Path) -> None:
    # ``h.start()`` called: the next line calls another method of ``Handler``, which its card
    # names (``h.end``), the most called first; what the file calls already is not named
    files = {
        "h/Handler.java": "package h;\n\npublic class Handler {\n    void start() {\n    }\n\n"
        "    void end() {\n    }\n\n    void reset() {\n    }\n}\n",
        "h/Use.java": "package h;\n\nclass Use {\n    void run(Handler h) {\n"
        "        h.start();\n        ",
        "h/Other.java": "package h;\n\nclass Other {\n    void go(Handler h) {\n        h.end();\n"
        "        h.end();\n    }\n}\n",
    }
    idx, _ = RepoIndex.build(write_files(tmp_path, files), save=False)
    hits = find_definitions(idx, "h/Use.java", files["h/Use.java"])
    (card,) = [h.card for h in hits if h.card.name == "Handler.start"]
    assert card.text.split("\n")[-1] == "// other methods of Handler: end, reset"


def test_a_test_class_gets_the_class_it_is_named_for(tmp_path: Path) -> None:
    # ``EngineTest`` tests ``Engine`` of its package: its card comes before the first test
    # names it, and stays while the tests name it; ``PartTest``'s tests have gone on without
    # naming ``Part`` (they go through another API): no card
    head = "package m;\n\nclass EngineTest {\n    void starts() {\n        "
    filler = "".join(f"        int v{i} = {i};\n" for i in range(60))
    named = head + "new Engine().start();\n" + filler + "        "
    part = "package m;\n\nclass PartTest {\n    void runs() {\n" + filler + "        "
    files = {**MEMBERS, "test/m/EngineTest.java": named, "test/m/PartTest.java": part}
    root = write_files(tmp_path, files)
    idx, _ = RepoIndex.build(root, save=False)
    for left in (head, named):
        how = {h.card.name: h.how for h in find_definitions(idx, "test/m/EngineTest.java", left)}
        assert how.get("Engine") == "in scope"
    how = {h.card.name: h.how for h in find_definitions(idx, "test/m/PartTest.java", part)}
    assert "Part" not in how
    early = "package m;\n\nclass PartTest {\n    void runs() {\n        "
    how = {h.card.name: h.how for h in find_definitions(idx, "test/m/PartTest.java", early)}
    assert how.get("Part") == "in scope"


SUBCLASSED = {
    "a/nodes/Node.java": "package a.nodes;\n\npublic abstract class Node {\n"
    "    public Node traverse() {\n        return this;\n    }\n}\n",
    "a/nodes/Element.java": "package a.nodes;\n\npublic class Element extends Node {\n"
    "    public Element select(String q) {\n        return this;\n    }\n\n"
    "    public Element traverse() {\n        return this;\n    }\n}\n",
    "a/nodes/Document.java": "package a.nodes;\n\npublic class Document extends Element {\n"
    '    public String title() {\n        return "";\n    }\n}\n',
    "b/ParseTest.java": "package b;\n\nimport a.nodes.Document;\n\nclass ParseTest {\n"
    "    void parses() {\n        new Document().traverse();\n"
    "        Document doc = new Document();\n",
}


def test_a_fresh_variable_s_type_lists_the_methods_it_inherits(tmp_path: Path) -> None:
    # ``Document doc`` is declared just above and not used yet: the next line calls
    # ``doc.select(``, which ``Element`` (another file, which ``ParseTest`` never names)
    # declares; ``Document``'s card names what it inherits, the nearest declaration of each
    # (``Element.traverse``, not ``Node``'s), what the code above calls first, and stays
    # exact under an update of ``Element``
    root = write_files(tmp_path, SUBCLASSED)
    idx, _ = RepoIndex.build(root, save=False)
    left = SUBCLASSED["b/ParseTest.java"] + "        "
    hits = find_definitions(idx, "b/ParseTest.java", left)
    (card,) = [h.card for h in hits if h.card.name == "Document"]
    assert card.text.split("\n")[-1] == "// its bases' members: traverse, select"
    assert set(card.listed) == {("a/nodes/Element.java", 3), ("a/nodes/Element.java", 7)}
    text = SUBCLASSED["a/nodes/Element.java"].replace(
        "    public Element traverse",
        ("    public void clear() {\n    }\n\n    public Element traverse"),
    )
    (root / "a/nodes/Element.java").write_text(text)
    idx.update_file("a/nodes/Element.java", text)
    rebuilt, _ = RepoIndex.build(root, save=False)
    for index in (idx, rebuilt):
        hits = find_definitions(index, "b/ParseTest.java", left)
        (card,) = [h.card for h in hits if h.card.name == "Document"]
        assert set(card.text.split("\n")[-1].split(": ")[1].split(", ")) == {
            "select",
            "traverse",
            "clear",
        }
