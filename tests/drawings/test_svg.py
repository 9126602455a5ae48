import base64
import xml.etree.ElementTree as ET

from configurator.drawings.svg import Canvas, esc, fit_text, svg_to_data_uri, text_width

from .svgcheck import HOSTILE, SVG_NS, parse_svg


def test_esc_escapes_markup_and_drops_xml_illegal_characters():
    assert esc('<a href="x">&\'') == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
    assert esc("bell\x07 nul\x00 ok\tnew\nline") == "bell nul ok\tnew\nline"
    # What is escaped parses back to the original text.
    canvas = Canvas(100, 20)
    canvas.text(0, 10, HOSTILE + "\x0b")
    root = parse_svg(canvas.to_svg())
    assert [el.text for el in root.iter(f"{SVG_NS}text")] == [HOSTILE]


def test_svg_to_data_uri_round_trips():
    canvas = Canvas(10, 10, title="显存")
    svg = canvas.to_svg()
    uri = svg_to_data_uri(svg)
    assert uri.startswith("data:image/svg+xml;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]).decode("utf-8") == svg


def test_text_width_counts_cjk_as_one_em():
    assert text_width("权重", 10) == 20
    assert text_width("Weights", 10) < text_width("权重权重", 10)
    assert fit_text("Cluster with a long name", 60).endswith("…")
    assert text_width(fit_text("Cluster with a long name", 60)) <= 60
    assert fit_text("short", 100) == "short"


def test_hatch_stays_inside_its_rectangle():
    canvas = Canvas(200, 100)
    canvas.hatch(20, 10, 50, 30, color="#000")
    root = ET.fromstring(canvas.to_svg())
    path = next(root.iter(f"{SVG_NS}path")).get("d")
    coords = [float(v) for v in path.replace("M", " ").replace("L", " ").split()]
    xs, ys = coords[0::2], coords[1::2]
    assert min(xs) >= 20 and max(xs) <= 70 and min(ys) >= 10 and max(ys) <= 40


def test_arrow_head_ends_at_the_target():
    canvas = Canvas(100, 100)
    canvas.arrow(10, 10, 90, 10)
    root = ET.fromstring(canvas.to_svg())
    head = next(root.iter(f"{SVG_NS}polygon")).get("points").split()[0]
    assert head == "90,10"
