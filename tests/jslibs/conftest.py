"""Cases shared by the Node and sandbox suites for the bundled npm libraries and polyfills.

A library case is an ES module (the import form under test plus real work) whose default export
is the JSON value it must produce. A polyfill case is a JS expression evaluated after
`_build/polyfills.js` in a realm that has no web APIs of its own.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "src" / "toolfoundry" / "sandbox" / "js" / "_build"
LIBS = BUILD / "libs"
POLYFILLS = BUILD / "polyfills.js"
JSBUILD = REPO / "jsbuild"

BOOKS = {
    "store": {
        "book": [
            {"title": "Sayings", "author": "Rees", "price": 8.95},
            {"title": "Sword", "author": "Waugh", "price": 12.99},
            {"title": "Moby Dick", "author": "Melville", "price": 8.99},
        ]
    }
}

# name -> (module source, expected default export)
LIB_CASES: dict[str, tuple[str, Any]] = {
    "decimal.js default": (
        'import Decimal from "decimal.js";\n'
        "export default [new Decimal(0.1).plus(0.2).toString(), 0.1 + 0.2 === 0.3];",
        ["0.3", False],
    ),
    "decimal.js named": (
        'import { Decimal } from "decimal.js";\n'
        "export default new Decimal(1).div(3).toDecimalPlaces(10).toString();",
        "0.3333333333",
    ),
    "decimal.js namespace": (
        'import * as D from "decimal.js";\n'
        'export default new D.Decimal("123.456").mul("1e3").toFixed(1);',
        "123456.0",
    ),
    "js-yaml default": (
        'import yaml from "js-yaml";\n'
        'export default yaml.load("name: toolfoundry\\nports: [80, 443]\\n'
        'nested:\\n  ok: true\\n");',
        {"name": "toolfoundry", "ports": [80, 443], "nested": {"ok": True}},
    ),
    "js-yaml named": (
        'import { load, dump } from "js-yaml";\n'
        'export default [dump({ a: 1, b: ["x"] }), load(dump({ k: "v: w" }))];',
        ["a: 1\nb:\n  - x\n", {"k": "v: w"}],
    ),
    "js-yaml namespace": (
        'import * as yaml from "js-yaml";\nexport default yaml.loadAll("--- 1\\n--- two\\n");',
        [1, "two"],
    ),
    "js-yaml safeLoad alias": (
        'import yaml, { safeLoad } from "js-yaml";\n'
        'export default [yaml.safeLoad("a: 1"), safeLoad("- b"), yaml.safeDump({ c: 2 })];',
        [{"a": 1}, ["b"], "c: 2\n"],
    ),
    "js-yaml error": (
        'import yaml from "js-yaml";\n'
        'let caught;\ntry { yaml.load("a: [1, 2"); } catch (e) { caught = e.name; }\n'
        "export default caught;",
        "YAMLException",
    ),
    "dayjs default": (
        'import dayjs from "dayjs";\n'
        'const d = dayjs("2024-03-05 10:20:30");\n'
        'export default [d.format("YYYY-MM-DD HH:mm:ss dddd"), d.add(1, "month").format("MMM D"),'
        ' d.diff(dayjs("2024-01-01"), "day"), dayjs.isDayjs(d)];',
        ["2024-03-05 10:20:30 Tuesday", "Apr 5", 64, True],
    ),
    "dayjs named": (
        'import dayjs, { isDayjs } from "dayjs";\n'
        'export default [isDayjs(dayjs("2020-02-29")), dayjs("2020-02-29").endOf("month").date()];',
        [True, 29],
    ),
    "dayjs plugins": (
        'import dayjs from "dayjs";\nimport utc from "dayjs/plugin/utc";\n'
        'import customParseFormat from "dayjs/plugin/customParseFormat";\n'
        'import duration from "dayjs/plugin/duration";\n'
        'import relativeTime from "dayjs/plugin/relativeTime";\n'
        'import isoWeek from "dayjs/plugin/isoWeek";\n'
        "for (const p of [utc, customParseFormat, duration, relativeTime, isoWeek])"
        " dayjs.extend(p);\n"
        'export default [dayjs.utc("2024-03-05T10:20:30+02:00").format(),'
        ' dayjs("05/03/2024", "DD/MM/YYYY").format("YYYY-MM-DD"),'
        ' dayjs.duration(90, "minutes").asHours(),'
        ' dayjs("2024-01-01").from(dayjs("2024-03-01")), dayjs("2024-03-05").isoWeek()];',
        ["2024-03-05T08:20:30Z", "2024-03-05", 1.5, "2 months ago", 10],
    ),
    "dayjs esm and plugin file forms": (
        'import dayjs from "dayjs/esm";\nimport core from "dayjs/esm/index.js";\n'
        'import utc from "dayjs/plugin/utc.js";\nimport isoWeek from "dayjs/esm/plugin/isoWeek";\n'
        'import duration from "dayjs/esm/plugin/duration/index.js";\n'
        "[utc, isoWeek, duration].forEach((p) => dayjs.extend(p));\n"
        'export default [dayjs.utc("2024-03-05T10:20:30+02:00").format(),'
        ' core("2024-03-05").isoWeek(), dayjs.duration(2, "hours").asMinutes()];',
        ["2024-03-05T08:20:30Z", 10, 120],
    ),
    "dayjs timezone plugin": (
        'import dayjs from "dayjs";\nimport utc from "dayjs/plugin/utc.js";\n'
        'import timezone from "dayjs/plugin/timezone";\n'
        'import advancedFormat from "dayjs/esm/plugin/advancedFormat";\n'
        "dayjs.extend(utc);\ndayjs.extend(timezone);\ndayjs.extend(advancedFormat);\n"
        'const meeting = dayjs.tz("2024-03-10 09:30", "America/New_York");\n'
        "export default [meeting.utc().format(),"
        ' meeting.tz("Asia/Tokyo").format("YYYY-MM-DD HH:mm z"),'
        ' dayjs.utc("2024-07-01T12:00:00Z").tz("Europe/Berlin").format("HH:mm Z"),'
        ' dayjs("2024-11-03T05:30:00Z").tz("America/Los_Angeles").format("h:mm A zzz")];',
        [
            "2024-03-10T13:30:00+00:00",
            "2024-03-10 22:30 GMT+9",
            "14:00 +02:00",
            "10:30 PM Pacific Daylight Time",
        ],
    ),
    "papaparse default": (
        'import Papa from "papaparse";\n'
        'const r = Papa.parse("name,qty\\napple,3\\n\\"pear, green\\",5\\n",'
        " { header: true, dynamicTyping: true, skipEmptyLines: true });\n"
        "export default [r.data, r.errors.length];",
        [[{"name": "apple", "qty": 3}, {"name": "pear, green", "qty": 5}], 0],
    ),
    "papaparse named": (
        'import { parse, unparse } from "papaparse";\n'
        'export default [parse("a;b\\n1;2").data, unparse([{ x: 1, y: "q,r" }])];',
        [[["a", "b"], ["1", "2"]], 'x,y\r\n1,"q,r"'],
    ),
    "papaparse namespace": (
        'import * as Papa from "papaparse";\nexport default Papa.parse("1,2").data;',
        [["1", "2"]],
    ),
    "marked named": (
        'import { marked } from "marked";\n'
        'export default marked.parse("# Hi\\n\\nSome **bold** text.");',
        "<h1>Hi</h1>\n<p>Some <strong>bold</strong> text.</p>\n",
    ),
    "marked default callable": (
        'import marked from "marked";\n'
        'export default [marked("- a\\n- b"), marked.parse("`x`"), typeof marked.use];',
        ["<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n", "<p><code>x</code></p>\n", "function"],
    ),
    "marked parse and namespace": (
        'import { parse } from "marked";\nimport * as m from "marked";\n'
        'export default [parse("*e*"), m.marked.parseInline("[l](https://x.test)")];',
        ["<p><em>e</em></p>\n", '<a href="https://x.test">l</a>'],
    ),
    "fast-xml-parser named": (
        'import { XMLParser } from "fast-xml-parser";\n'
        'const p = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@" });\n'
        'export default p.parse("<feed><item id=\\"1\\">a</item>'
        '<item id=\\"2\\">b</item></feed>");',
        {"feed": {"item": [{"#text": "a", "@id": "1"}, {"#text": "b", "@id": "2"}]}},
    ),
    "fast-xml-parser default and builder": (
        'import fxp from "fast-xml-parser";\n'
        'const xml = new fxp.XMLBuilder().build({ root: { a: 1, b: "x" } });\n'
        'export default [xml, new fxp.XMLParser().parse(xml), fxp.XMLValidator.validate("<a>")'
        " === true];",
        ["<root><a>1</a><b>x</b></root>", {"root": {"a": 1, "b": "x"}}, False],
    ),
    "diff namespace": (
        'import * as Diff from "diff";\n'
        'export default Diff.diffLines("a\\nb\\nc\\n", "a\\nB\\nc\\n")'
        '.map((p) => [p.added ? "+" : p.removed ? "-" : " ", p.value]);',
        [[" ", "a\n"], ["-", "b\n"], ["+", "B\n"], [" ", "c\n"]],
    ),
    "diff named": (
        'import { diffLines, createPatch } from "diff";\n'
        'export default [diffLines("x\\n", "x\\n").length,'
        ' createPatch("f.txt", "one\\n", "two\\n").split("\\n").slice(2)];',
        [1, ["--- f.txt", "+++ f.txt", "@@ -1,1 +1,1 @@", "-one", "+two", ""]],
    ),
    "diff default": (
        'import Diff from "diff";\n'
        'export default Diff.diffWords("the cat", "the dog")'
        ".filter((p) => p.added).map((p) => p.value);",
        ["dog"],
    ),
    "jsonpath-plus named": (
        'import { JSONPath } from "jsonpath-plus";\n'
        f"const json = {json.dumps(BOOKS)};\n"
        'export default [JSONPath({ path: "$.store.book[*].author", json }),'
        ' JSONPath({ path: "$..book[?(@.price < 10)].title", json })];',
        [["Rees", "Waugh", "Melville"], ["Sayings", "Moby Dick"]],
    ),
    "jsonpath-plus default": (
        'import jp from "jsonpath-plus";\n'
        f"const json = {json.dumps(BOOKS)};\n"
        'export default jp.JSONPath({ path: "$.store.book.length", json, wrap: false });',
        3,
    ),
    "file-name forms of the other libraries": (
        'import Decimal from "decimal.js/decimal.mjs";\n'
        'import yaml from "js-yaml/dist/js-yaml.mjs";\n'
        'import Papa from "papaparse/papaparse.min.js";\n'
        'import { marked } from "marked/lib/marked.esm.js";\n'
        'export default [new Decimal("0.1").plus("0.2").toString(), yaml.load("a: 1"),'
        ' Papa.parse("x,y").data, marked.parseInline("*e*")];',
        ["0.3", {"a": 1}, [["x", "y"]], "<em>e</em>"],
    ),
    "date-fns named": (
        "import { format, addDays, differenceInCalendarDays, parseISO, addBusinessDays,"
        ' formatDistance, isWeekend } from "date-fns";\n'
        'export default [format(addDays(parseISO("2024-02-28"), 2), "yyyy-MM-dd EEEE"),'
        ' differenceInCalendarDays(parseISO("2024-03-10"), parseISO("2024-03-01")),'
        ' format(addBusinessDays(parseISO("2024-03-08"), 1), "yyyy-MM-dd"),'
        ' formatDistance(parseISO("2024-01-01"), parseISO("2024-03-01"), { addSuffix: true }),'
        ' isWeekend(parseISO("2024-03-09"))];',
        ["2024-03-01 Friday", 9, "2024-03-11", "2 months ago", True],
    ),
    "date-fns per-function files and namespace": (
        'import format from "date-fns/format";\nimport { addDays } from "date-fns/addDays.js";\n'
        'import * as dateFns from "date-fns";\nimport dfns from "date-fns";\n'
        "const d = addDays(new Date(Date.UTC(2024, 0, 1)), 1);\n"
        'export default [format(d, "MMM d, yyyy"), dateFns.getISOWeek(d), dfns.isLeapYear(d)];',
        ["Jan 2, 2024", 1, True],
    ),
    "date-fns locales": (
        'import { format } from "date-fns";\nimport { de, fr } from "date-fns/locale";\n'
        'import { ja } from "date-fns/locale/ja";\nconst d = new Date(Date.UTC(2024, 2, 5));\n'
        'export default [format(d, "EEEE, d. MMMM yyyy", { locale: de }),'
        ' format(d, "PPPP", { locale: fr }), format(d, "PPP", { locale: ja })];',
        ["Dienstag, 5. März 2024", "mardi 5 mars 2024", "2024年3月5日"],
    ),
    "lodash default": (
        'import _ from "lodash";\n'
        "export default [_.groupBy([1.3, 2.1, 2.4], Math.floor),"
        ' _.get({ a: [{ b: 3 }] }, "a[0].b"),'
        ' _.chunk([1, 2, 3, 4, 5], 2), _.sumBy([{ n: 1 }, { n: 2 }], "n"),'
        ' _.uniqBy([{ id: 1 }, { id: 1 }, { id: 2 }], "id").length,'
        " _.isEqual({ a: [1] }, { a: [1] }),"
        ' _.merge({ a: { b: 1 } }, { a: { c: 2 } }), _.camelCase("Foo Bar"), typeof _.debounce];',
        [
            {"1": [1.3], "2": [2.1, 2.4]},
            3,
            [[1, 2], [3, 4], [5]],
            3,
            2,
            True,
            {"a": {"b": 1, "c": 2}},
            "fooBar",
            "function",
        ],
    ),
    "lodash named and per-function files": (
        'import { sortBy, kebabCase } from "lodash";\nimport get from "lodash/get";\n'
        'import cloneDeep from "lodash/cloneDeep.js";\n'
        'export default [sortBy([3, 1, 2]), kebabCase("Hello World"), get({ x: { y: 1 } }, "x.y"),'
        " cloneDeep({ a: [1] })];",
        [[1, 2, 3], "hello-world", 1, {"a": [1]}],
    ),
    "lodash-es": (
        'import _, { groupBy, orderBy } from "lodash-es";\nimport pick from "lodash-es/pick";\n'
        'export default [Object.keys(groupBy(["one", "two", "three"], "length")),'
        ' orderBy([{ a: 2 }, { a: 1 }], ["a"], ["desc"]), pick({ a: 1, b: 2 }, ["a"]),'
        " _.range(3)];",
        [["3", "5"], [{"a": 2}, {"a": 1}], {"a": 1}, [0, 1, 2]],
    ),
    "zod named": (
        'import { z } from "zod";\n'
        "const User = z.object({ name: z.string().min(1), age: z.number().int().positive(),"
        " email: z.string().email().optional() });\n"
        'const bad = User.safeParse({ name: "", age: -1, email: "x" });\n'
        'export default [User.safeParse({ name: "a", age: 3 }).success, bad.success,'
        ' bad.error.issues.map((i) => i.path.join(".") + ":" + i.code),'
        ' z.object({ n: z.number() }).safeParse({ n: "x" }).error.issues[0].message];',
        [
            True,
            False,
            ["name:too_small", "age:too_small", "email:invalid_format"],
            "Invalid input: expected number, received string",
        ],
    ),
    "zod default, namespace and zod/v4": (
        'import z from "zod";\nimport { z as z4 } from "zod/v4";\nimport * as zz from "zod";\n'
        'export default [z.string().parse("x"), z4.number().safeParse("1").success,'
        ' zz.coerce.number().parse("42"), z.enum(["a", "b"]).options,'
        " (() => { try { z.string().parse(1); } catch (e) { return e.name; } })()];",
        ["x", False, 42, ["a", "b"], "ZodError"],
    ),
    "uuid named and namespace": (
        'import { v4 as uuidv4, validate, version, v7, NIL } from "uuid";\n'
        'import * as uuid from "uuid";\nimport uuidDefault from "uuid";\nconst id = uuidv4();\n'
        "export default [validate(id), version(id), /^[0-9a-f-]{36}$/.test(id), version(v7()), NIL,"
        " uuid.validate(uuidDefault.v4())];",
        [True, 4, True, 7, "00000000-0000-0000-0000-000000000000", True],
    ),
    "nanoid": (
        'import { nanoid, customAlphabet } from "nanoid";\nimport nanoidDefault from "nanoid";\n'
        'import { nanoid as insecure } from "nanoid/non-secure";\n'
        'export default [nanoid().length, /^[abc]{8}$/.test(customAlphabet("abc", 8)()),'
        " nanoidDefault(10).length, insecure(5).length];",
        [21, True, 10, 5],
    ),
}

# name -> (JS expression, expected JSON value)
POLYFILL_CASES: dict[str, tuple[str, Any]] = {
    "globals present": (
        "['URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'atob', 'btoa',"
        " 'structuredClone'].map((n) => typeof globalThis[n])",
        ["function"] * 7,
    ),
    "URL parts and serialisation": (
        "(() => { const u = new URL('HTTPS://user:pw@Example.COM:443/a/./b/../c d?x=1&y=ä#frag');"
        " return [u.href, u.protocol, u.username, u.host, u.port, u.pathname, u.search, u.hash,"
        " u.origin, String(u), JSON.stringify(u)]; })()",
        [
            "https://user:pw@example.com/a/c%20d?x=1&y=%C3%A4#frag",
            "https:",
            "user",
            "example.com",
            "",
            "/a/c%20d",
            "?x=1&y=%C3%A4",
            "#frag",
            "https://example.com",
            "https://user:pw@example.com/a/c%20d?x=1&y=%C3%A4#frag",
            '"https://user:pw@example.com/a/c%20d?x=1&y=%C3%A4#frag"',
        ],
    ),
    "URL IDNA": (
        "[new URL('https://Bücher.example/ü').href, new URL('http://xn--bcher-kva.example').hostname,"
        " new URL('https://EXAMPLE.com.').hostname]",
        ["https://xn--bcher-kva.example/%C3%BC", "xn--bcher-kva.example", "example.com."],
    ),
    "URL relative resolution and setters": (
        "(() => { const u = new URL('../x?q#h', 'https://a.test/b/c/d');"
        " u.searchParams.append('k', 'v w'); u.port = '8443'; u.hash = '';"
        " return [u.href, new URL('//other.test/p', 'https://a.test').href]; })()",
        ["https://a.test:8443/b/x?q=&k=v+w", "https://other.test/p"],
    ),
    "URL errors": (
        "(() => { const out = [];"
        " for (const s of ['nope', 'https://exa mple.com', 'http://[::1']) {"
        " try { new URL(s); out.push('parsed'); } catch (e) { out.push(e instanceof TypeError); } }"
        " return [out, URL.canParse('https://ok.test'), URL.canParse('::')]; })()",
        [[True, True, True], True, False],
    ),
    "URL IPv4 and IPv6 hosts": (
        "[new URL('http://0x7f.1/').hostname, new URL('http://2130706433/').hostname,"
        " new URL('http://[0:0::1]/').hostname]",
        ["127.0.0.1", "127.0.0.1", "[::1]"],
    ),
    "URLSearchParams iteration and sort": (
        "(() => { const p = new URLSearchParams('?b=2&a=1&a=3&c=%20x+y&d');"
        " p.sort(); const seen = []; p.forEach((v, k) => seen.push(k + '=' + v));"
        " return [p.toString(), [...p], [...p.keys()], p.getAll('a'), p.get('c'), p.has('d'),"
        " p.size, seen]; })()",
        [
            "a=1&a=3&b=2&c=+x+y&d=",
            [["a", "1"], ["a", "3"], ["b", "2"], ["c", " x y"], ["d", ""]],
            ["a", "a", "b", "c", "d"],
            ["1", "3"],
            " x y",
            True,
            5,
            ["a=1", "a=3", "b=2", "c= x y", "d="],
        ],
    ),
    "URLSearchParams construction and mutation": (
        "(() => { const p = new URLSearchParams({ q: 'a b&c', r: 'é' });"
        " p.set('q', '1'); p.append('s', '☃'); p.delete('r');"
        " const q = new URLSearchParams([['x', '1'], ['x', '2']]); q.delete('x', '1');"
        " return [p.toString(), q.toString(), new URLSearchParams('a=%zz&b=%41').get('a')]; })()",
        ["q=1&s=%E2%98%83", "x=2", "%zz"],
    ),
    "TextEncoder round trip with astral characters": (
        "(() => { const s = 'aé€😀𝄞'; const bytes = new TextEncoder().encode(s);"
        " return [Array.from(bytes), new TextDecoder().decode(bytes) === s,"
        " new TextEncoder().encoding]; })()",
        [
            [97, 195, 169, 226, 130, 172, 240, 159, 152, 128, 240, 157, 132, 158],
            True,
            "utf-8",
        ],
    ),
    "TextEncoder lone surrogates and encodeInto": (
        "(() => { const dest = new Uint8Array(5);"
        " return [Array.from(new TextEncoder().encode('\\ud800x\\udc00')),"
        " new TextEncoder().encodeInto('a😀b', dest), Array.from(dest)]; })()",
        [
            [239, 191, 189, 120, 239, 191, 189],
            {"read": 3, "written": 5},
            [97, 240, 159, 152, 128],
        ],
    ),
    "TextDecoder replaces invalid bytes": (
        "new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0xc0, 0x80, 0xed, 0xa0, 0x80,"
        " 0xe2, 0x82, 0x62, 0xf0, 0x9f, 0x98]))",
        "a\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffdb\ufffd",
    ),
    "TextDecoder fatal and labels": (
        "(() => { const out = []; try { new TextDecoder('utf-8', { fatal: true })"
        ".decode(new Uint8Array([0xc3])); } catch (e) { out.push(e instanceof TypeError); }"
        " try { new TextDecoder('latin1'); } catch (e) { out.push(e instanceof RangeError); }"
        " const d = new TextDecoder(' UTF8 ', { fatal: true });"
        " return [...out, d.encoding, d.fatal, d.ignoreBOM]; })()",
        [True, True, "utf-8", True, False],
    ),
    "TextDecoder stream and BOM": (
        "(() => { const d = new TextDecoder(); const b = new TextEncoder().encode('😀!');"
        " const s = d.decode(b.subarray(0, 2), { stream: true }) + d.decode(b.subarray(2));"
        " const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x41]);"
        " return [s, new TextDecoder().decode(bom),"
        " new TextDecoder('utf-8', { ignoreBOM: true }).decode(bom).length]; })()",
        ["😀!", "A", 2],
    ),
    "TextDecoder stream flush": (
        "(() => { const d = new TextDecoder();"
        " return [d.decode(new Uint8Array([0x61, 0xe2, 0x82]), { stream: true }), d.decode(),"
        " d.decode(new Uint8Array([0x62]))]; })()",
        ["a", "\ufffd", "b"],
    ),
    "TextDecoder input kinds": (
        "(() => { const b = new TextEncoder().encode('😀!'); const d = new TextDecoder();"
        " let bad; try { d.decode('text'); } catch (e) { bad = e instanceof TypeError; }"
        " return [d.decode(new DataView(b.buffer, 4)), d.decode(b.buffer.slice(0, 4)),"
        " d.decode(), bad]; })()",
        ["!", "😀", "", True],
    ),
    "atob and btoa": (
        "[btoa('hello'), atob('aGVsbG8='), atob(' aGVs bG8 '), atob('aGVsbG8'), btoa(''),"
        " btoa(String.fromCharCode(0, 255)), atob('AP8=').charCodeAt(1), btoa.length, atob.length]",
        ["aGVsbG8=", "hello", "hello", "hello", "", "AP8=", 255, 1, 1],
    ),
    "atob and btoa errors": (
        "['a', 'aGVsbG8==', 'ab=c', '*'].map((s) => { try { atob(s); return 'ok'; } catch (e) {"
        " return [e.name, e instanceof DOMException, e.code]; } }).concat([(() => {"
        " try { btoa('☃'); return 'ok'; } catch (e) { return [e.name, e instanceof DOMException,"
        " e.code]; } })(), (() => { try { atob(); return 'ok'; } catch (e) {"
        " return e instanceof TypeError; } })()])",
        [["InvalidCharacterError", True, 5]] * 5 + [True],
    ),
    "structuredClone nested Map, Set, Date and cycles": (
        "(() => { const d = new Date(Date.UTC(2024, 0, 2)); const inner = { when: d };"
        " const o = { m: new Map([['k', inner]]), s: new Set([1, inner]) }; o.self = o;"
        " const c = structuredClone(o); const ci = c.m.get('k');"
        " return [c !== o, c.self === c, ci !== inner, ci.when instanceof Date, ci.when !== d,"
        " ci.when.toISOString(), c.s.has(ci)]; })()",
        [True, True, True, True, True, "2024-01-02T00:00:00.000Z", True],
    ),
    "structuredClone RegExp, BigInt, holes and bytes": (
        "(() => { const o = { r: /x+/gi, big: 10n, arr: [1, , 3], bytes: new Uint8Array([1, 2]) };"
        " const c = structuredClone(o); return [c.r !== o.r, c.r.source + '/' + c.r.flags,"
        " String(c.big), 1 in c.arr, Array.from(c.bytes), c.bytes.buffer !== o.bytes.buffer]; })()",
        [True, "x+/gi", "10", False, [1, 2], True],
    ),
    "structuredClone errors": (
        "[() => 1, Symbol('s'), new WeakMap()].map((v) => { try { structuredClone(v); return 'ok';"
        " } catch (e) { return [e.name, e instanceof DOMException, e.code]; } })"
        ".concat([(() => { const e = structuredClone(new RangeError('boom'));"
        " return [e instanceof RangeError, e.message]; })()])",
        [["DataCloneError", True, 25]] * 3 + [[True, "boom"]],
    ),
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise `lib_case` and `polyfill_case` with (name, source, expected) from the tables."""
    for argument, table in (("lib_case", LIB_CASES), ("polyfill_case", POLYFILL_CASES)):
        if argument in metafunc.fixturenames:
            cases = [(name, source, expected) for name, (source, expected) in table.items()]
            metafunc.parametrize(argument, cases, ids=list(table))


@pytest.fixture(scope="session")
def node() -> str:
    """Path of the `node` executable (scripts/setup.sh installs it)."""
    path = shutil.which("node")
    assert path, "node is not installed: run `make setup` (scripts/setup.sh installs it)"
    return path


@pytest.fixture(scope="session")
def built() -> Path:
    """The build directory, after checking the build step has run."""
    manifest = LIBS / "manifest.json"
    missing = "the JS bundles are missing: run `make jslibs` (node jsbuild/build.mjs --install)"
    assert manifest.is_file(), missing
    assert POLYFILLS.is_file(), missing
    return BUILD


def _run_node(node: str, script: str) -> Any:
    proc = subprocess.run(
        [node, "--input-type=module", "-"],
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
        env={"TZ": "UTC", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def node_module_source(source: str) -> str:
    """A case's module with each bundled library's npm name replaced by its bundle's file URL."""
    manifest = json.loads((LIBS / "manifest.json").read_text())
    targets = {name: name for name in manifest["libs"]} | manifest.get("aliases", {})
    for name, target in targets.items():
        if isinstance(target, dict):  # one export of a library (lodash/get): a data: module
            lib = (LIBS / manifest["libs"][target["module"]]["file"]).as_uri()
            export = target["export"]
            url = f"data:text/javascript,export {{ {export} as default, {export} }} from '{lib}';"
        else:
            url = (LIBS / manifest["libs"][target]["file"]).as_uri()
        source = re.sub(rf"from\s*([\"']){re.escape(name)}\1", f'from "{url}"', source)
    return source


@pytest.fixture(scope="session")
def node_lib_results(node: str, built: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Every library case run once in one Node process: {case: {"value": ...} | {"error": ...}}."""
    work = tmp_path_factory.mktemp("node-cases")
    files = {}
    for index, (name, (source, _)) in enumerate(LIB_CASES.items()):
        path = work / f"case{index}.mjs"
        path.write_text(node_module_source(source))
        files[name] = path.as_uri()
    script = f"""
const files = {json.dumps(files)};
const out = {{}};
for (const [name, url] of Object.entries(files)) {{
  try {{ out[name] = {{ value: (await import(url)).default }}; }}
  catch (e) {{ out[name] = {{ error: String(e && e.stack || e) }}; }}
}}
console.log(JSON.stringify(out));
"""
    return _run_node(node, script)


@pytest.fixture(scope="session")
def node_polyfill_results(node: str, built: Path) -> Any:
    """Every polyfill case run in its own bare Node `vm` realm after polyfills.js."""
    cases = {name: expr for name, (expr, _) in POLYFILL_CASES.items()}
    script = f"""
import vm from "node:vm";
import {{ readFileSync }} from "node:fs";
const polyfills = readFileSync({json.dumps(str(POLYFILLS))}, "utf8");
const cases = {json.dumps(cases)};
const out = {{}};
for (const [name, expr] of Object.entries(cases)) {{
  const realm = vm.createContext({{}});
  try {{
    vm.runInContext(polyfills, realm);
    out[name] = {{ value: JSON.parse(vm.runInContext(`JSON.stringify(${{expr}})`, realm)) }};
  }} catch (e) {{ out[name] = {{ error: String(e && e.stack || e) }}; }}
}}
console.log(JSON.stringify(out));
"""
    return _run_node(node, script)
