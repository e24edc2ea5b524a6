"""A realistic tool library and plain-language queries for tuning and testing search relevance.

The tools are what agents made in recorded sessions (CSV revenue, YAML to JSON, an exact
money split, Markdown links, a unified diff, JSONPath, business days, a network weather tool,
HMAC, slugify) plus the everyday tools a shared registry gathers; descriptions and parameter
docs are written the way models write them. ``QUERIES`` name the tool a query must rank first
(the wording a model uses when it looks before creating: often not the tool's own words),
``UNRELATED`` are needs no tool here covers, for which search must offer nothing.
"""

from __future__ import annotations

from typing import Any


def _params(**fields: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in fields.items()},
        "required": list(fields),
    }


LIBRARY: list[tuple[str, str, dict[str, Any]]] = [
    (
        "csv_revenue_by_region",
        "Sum the revenue column of CSV text per region and return totals sorted descending.",
        _params(csv="CSV text with a header row", column="name of the revenue column"),
    ),
    (
        "yaml_to_json",
        "Convert a YAML document to JSON.",
        _params(yaml="the YAML text"),
    ),
    (
        "split_money",
        "Split an amount of money into n parts that add up exactly, distributing the "
        "remaining cents (decimal arithmetic, no floating point errors).",
        _params(amount="decimal amount, e.g. '100.00'", parts="how many shares"),
    ),
    (
        "extract_markdown_links",
        "Extract every link (text and URL) from a Markdown document.",
        _params(markdown="the Markdown source"),
    ),
    (
        "unified_diff",
        "Compute a unified diff between two texts, line by line.",
        _params(old="original text", new="changed text"),
    ),
    (
        "jsonpath_query",
        "Evaluate a JSONPath expression against a JSON document and return the matches.",
        _params(document="the JSON value", path="JSONPath expression like $.items[*].id"),
    ),
    (
        "business_days_between",
        "Count working days between two dates, skipping weekends and the given holidays.",
        _params(start="ISO date", end="ISO date", holidays="list of ISO dates to skip"),
    ),
    (
        "current_weather",
        "Current temperature and conditions for a city from the weather API.",
        _params(city="city name"),
    ),
    (
        "hmac_sha256",
        "Sign a message with HMAC-SHA256 and return the hex signature.",
        _params(message="the message", key="the secret key"),
    ),
    (
        "slugify",
        "Turn a title into a URL slug: lower case, words joined by dashes.",
        _params(text="the title"),
    ),
    ("word_count", "Count the words of a text.", _params(text="the text")),
    (
        "sha256_hash",
        "Compute the SHA-256 digest of a string as hex.",
        _params(text="the input string"),
    ),
    (
        "base64_encode",
        "Encode text as Base64, or decode Base64 back to text.",
        _params(text="text or Base64", mode="encode or decode"),
    ),
    (
        "parse_url",
        "Split a URL into scheme, host, port, path, query parameters and fragment.",
        _params(url="the URL"),
    ),
    (
        "uuid_v4",
        "Generate random version 4 UUIDs.",
        {"type": "object", "properties": {"count": {"type": "integer"}}},
    ),
    (
        "format_date",
        "Format an ISO date or timestamp with a pattern such as YYYY-MM-DD HH:mm.",
        _params(date="ISO date or timestamp", pattern="dayjs format pattern"),
    ),
    (
        "convert_timezone",
        "Convert a date and time from one time zone to another.",
        _params(datetime="ISO date-time", source="IANA zone", target="IANA zone"),
    ),
    (
        "validate_json_schema",
        "Check a JSON value against a JSON Schema and list every violation.",
        _params(value="the JSON value", schema="the JSON Schema"),
    ),
    (
        "strip_html",
        "Remove HTML tags from markup and return the plain text.",
        _params(html="the HTML"),
    ),
    (
        "validate_email",
        "Check whether an email address is syntactically valid.",
        _params(email="the address"),
    ),
    (
        "convert_temperature",
        "Convert a temperature between Celsius, Fahrenheit and Kelvin.",
        _params(value="the temperature", unit_from="C, F or K", unit_to="C, F or K"),
    ),
    (
        "roman_numerals",
        "Convert an integer to Roman numerals and back.",
        _params(value="number or Roman numeral"),
    ),
    (
        "change_case",
        "Change the case of identifiers: camelCase, snake_case, kebab-case or Title Case.",
        _params(text="the identifier or phrase", style="target case style"),
    ),
    (
        "csv_to_json",
        "Parse CSV text with a header row into a list of JSON objects.",
        _params(csv="the CSV text"),
    ),
    (
        "xml_to_json",
        "Parse an XML document into JSON.",
        _params(xml="the XML text"),
    ),
    (
        "markdown_to_html",
        "Render Markdown to HTML.",
        _params(markdown="the Markdown source"),
    ),
    (
        "exchange_rate",
        "Convert an amount between currencies using today's exchange rate.",
        _params(amount="the amount", source="ISO currency code", target="ISO currency code"),
    ),
    (
        "compound_interest",
        "Compute the future value of a deposit with compound interest.",
        _params(principal="initial amount", rate="yearly rate in percent", years="duration"),
    ),
    (
        "json_flatten",
        "Flatten nested JSON objects into dotted keys.",
        _params(value="the nested JSON"),
    ),
    (
        "dedupe_lines",
        "Remove duplicate lines from a text, keeping the first occurrence.",
        _params(text="the text"),
    ),
    (
        "sort_csv",
        "Sort the rows of CSV text by one column, numerically or alphabetically.",
        _params(csv="the CSV text", column="column to sort by"),
    ),
    (
        "render_template",
        "Fill the {{placeholders}} of a text template from a JSON object.",
        _params(template="the template", values="the values"),
    ),
    (
        "add_days",
        "Add or subtract a number of days, weeks or months to a date.",
        _params(date="ISO date", amount="signed amount", unit="days, weeks or months"),
    ),
    (
        "github_repo_stars",
        "Look up a GitHub repository's star count and description via the GitHub API.",
        _params(repo="owner/name"),
    ),
    (
        "lorem_ipsum",
        "Generate placeholder lorem ipsum paragraphs.",
        {"type": "object", "properties": {"paragraphs": {"type": "integer"}}},
    ),
    (
        "password_strength",
        "Score how strong a password is and say why.",
        _params(password="the password"),
    ),
    (
        "levenshtein_distance",
        "Edit distance between two strings (Levenshtein).",
        _params(a="first string", b="second string"),
    ),
    (
        "parse_cron",
        "Explain a cron expression and list its next run times.",
        _params(expression="the cron expression"),
    ),
    (
        "invoice_total",
        "Total an invoice's line items with quantity, unit price, discount and VAT.",
        _params(items="line items", vat="VAT rate in percent"),
    ),
    (
        "count_by_key",
        "Group a JSON array of objects by a key and count each group.",
        _params(items="the array", key="the key to group by"),
    ),
]

# (query, the tool that must rank first): plain-language search, as a model asks.
QUERIES: list[tuple[str, str]] = [
    ("total revenue per region from a csv", "csv_revenue_by_region"),
    ("convert yaml to json", "yaml_to_json"),
    ("split 100 dollars into 3 exact parts", "split_money"),
    ("get all links from markdown", "extract_markdown_links"),
    ("diff two texts", "unified_diff"),
    ("query json with jsonpath", "jsonpath_query"),
    ("number of business days between two dates", "business_days_between"),
    ("weather in a city", "current_weather"),
    ("hmac signature of a message", "hmac_sha256"),
    ("make a url slug from a title", "slugify"),
    ("how many words in a text", "word_count"),
    ("sha256 hash of a string", "sha256_hash"),
    ("decode base64", "base64_encode"),
    ("break a url into its parts", "parse_url"),
    ("generate a uuid", "uuid_v4"),
    ("convert celsius to fahrenheit", "convert_temperature"),
    ("strip html tags", "strip_html"),
    ("is this email address valid", "validate_email"),
    ("convert csv into json objects", "csv_to_json"),
    ("render markdown as html", "markdown_to_html"),
    ("convert euros to dollars", "exchange_rate"),
    ("remove duplicate lines", "dedupe_lines"),
    ("what time is it in tokyo when it is 9am in london", "convert_timezone"),
    ("check json against a schema", "validate_json_schema"),
    ("explain this cron expression", "parse_cron"),
    ("add 30 days to a date", "add_days"),
]

# Near-synonyms and inflections: the tool's idea in other words (stemming, a shared word).
NEAR: list[tuple[str, str]] = [
    ("signing messages with hmac", "hmac_sha256"),
    ("working days excluding holidays", "business_days_between"),
    ("slugs for titles", "slugify"),
    ("counting words", "word_count"),
    ("temperatures in kelvin", "convert_temperature"),
    ("extracting links", "extract_markdown_links"),
    ("yaml documents", "yaml_to_json"),
    ("roman numeral for 1999", "roman_numerals"),
]

# Needs no tool of the library covers: search must return nothing for them.
UNRELATED: list[str] = [
    "send an email to my team",
    "translate english to german",
    "resize a png image",
    "transcribe an audio file",
    "book a flight to paris",
    "play some music",
    "compress a folder into a zip archive",
    "ocr a scanned receipt",
    "train a neural network",
    "post a tweet",
    "schedule a meeting on my calendar",
    "summarize this pdf",
    "detect the language of a sentence",
    "stock price of apple",
    "spell check a paragraph",
    "draw a bar chart",
    # sharing a word with some tool, about something else
    "convert a video to mp4",
    "format a usb drive",
    "count the calories of a meal",
    "validate a credit card number",
    "sort my inbox by sender",
    "generate a logo for my company",
    "parse a pdf file",
    "add a user to the database",
]
