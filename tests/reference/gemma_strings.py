"""The texts the Gemma fixtures hold: ~300 strings for the tokenizer, 12 texts for the model (none of them from
Gemma's training or the app's presets: written for these fixtures). Imported by make_gemma_fixtures.py only."""

from __future__ import annotations

ENGLISH = [
    "The cat sat on the mat.", "Hello world", "hello, World!", "I can't believe it's not butter.",
    "The animal didn't cross the street because it was too tired.", "Don't stop-believing; it's 9:30 a.m.",
    "She sells sea shells by the sea shore.", "A quick brown fox jumps over the lazy dog.",
    "Why?", "Well... maybe.", "e-mail me at someone@example.com", "https://example.org/a/b?c=d&e=f#top",
    "Mr. O'Neill's well-known co-operative", "UPPERCASE lowercase MiXeD", "naïve café résumé façade",
    "The year 2024 had 366 days.", "3.14159 is close to pi", "1,000,000 people", "a", "A", "I", ".", "?!",
    "Attention is all you need.", "Transformers read the whole sentence at once.",
    "The keys are matched against the query.", "tokenization", "antidisestablishmentarianism",
    "supercalifragilisticexpialidocious", "The end.", "It was the best of times, it was the worst of times.",
    "\"Quoted\" and 'single' and `back`", "(parentheses) [brackets] {braces}", "#hashtag @mention $dollar %percent",
    "x^2 + y^2 = z^2", "C++ and C# and F#", "Ünïcödé", "Zürich, Köln, Malmö", "¿Qué tal? ¡Bien!",
    "The weather is nice today, isn't it?",
]

JAPANESE = [
    "今日はとても良い天気ですね。", "日本の首都は東京です。", "猫が窓の外を見ている。", "明日は雨が降るかもしれません。",
    "私は毎朝コーヒーを飲みます。", "この本はとても面白かった。", "駅までどのくらいかかりますか？", "彼女はピアノを弾くのが上手だ。",
    "新しいパソコンを買いました。", "富士山は日本で一番高い山です。", "子供たちが公園で遊んでいる。", "電車が遅れて会議に間に合わなかった。",
    "桜の花が満開になりました。", "この料理は少し辛すぎる。", "図書館で静かに勉強しましょう。", "週末に友達と映画を見に行った。",
    "注意機構は文の中の単語同士を結びつける。", "東京タワーから夜景を眺めた。", "宿題を忘れて先生に叱られた。", "夏休みに海へ泳ぎに行きたい。",
    "ひらがな", "カタカナ", "漢字", "ｶﾀｶﾅ（半角）", "「こんにちは」と彼は言った。", "１２３４５（全角数字）", "AIと日本語",
    "吾輩は猫である。名前はまだ無い。", "ラーメンを食べたい！", "えっ、本当に？",
]

CODE = [
    "def f(x):\n    return x * 2\n", "for i in range(10):\n\tprint(i)", "int main() { return 0; }",
    "if (a && b || !c) { x += 1; }", "const add = (a, b) => a + b;", "SELECT * FROM users WHERE id = 42;",
    "import numpy as np\nnp.zeros((3, 4))", "x = [1, 2, 3]  # a list", "<?php echo $x; ?>", "fn main() -> i32 { 0 }",
    "#include <stdio.h>", "print(\"hello\")", "a_b_c = a__b__c", "class Foo(Bar):\n    pass",
    "    indented four", "\t\ttwo tabs", "lambda x: x ** 2", "{\"key\": [1, 2.5, null, true]}",
    "git commit -m \"fix\"", "$ ls -la /tmp | grep foo", "while True:\n        break", "i++; j--; k <<= 2;",
    "// comment\n/* block */", "<!-- html comment -->", "0x1F 0b1010 1e-9", "std::vector<int> v;",
    "async def run():\n    await go()", "SELECT\n\tname,\n\tage\nFROM t", "a != b and c >= d", "@decorator\ndef g(): ...",
]

WHITESPACE = ([" " * n for n in (1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 40)]
              + ["\t" * n for n in (1, 2, 3, 8, 31, 32)]
              + [" " * n for n in (47, 48, 63, 64, 65, 100)] + ["\t" * 40, "\n" * 64, " \n" * 20, "\n " * 20]
              + ["\n" * n for n in (1, 2, 3, 10, 31, 32, 33)]
              + ["a" + " " * n + "b" for n in (1, 2, 3, 5, 9, 30, 35, 64)]
              + [" a", "a ", " a ", "  leading", "trailing  ", "a \n b", "a\n\nb", "a\r\nb", "\r", "a\tb\tc",
                 " \t \n ", "\n a", "word\n    indented", "x\u3000y", "\u00a0nbsp", "a\u2003b", "a\u200bb"])

EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇯🇵", "I ❤️ NumPy", "🎉🎉🎉", "😀 smile", "日本🗾", "✓ done", "★☆",
         "🤖 robot", "🧠 brain", "a😀b", "🙂🙃", "🏳️‍🌈", "☕", "⌚ time", "🍣と🍜", "👋 hello", "🥲"]

HTML = ["<b>bold</b>", "<i>it</i>", "<table><tr><td>1</td></tr></table>", "<div class=\"x\">text</div>",
        "<script>alert('x')</script>", "<h1>Title</h1>", "<a href=\"/\">link</a>", "<br/>", "&amp; &lt; &gt;",
        "<p>paragraph</p>", "<code>x = 1</code>", "<ul><li>one</li><li>two</li></ul>", "<strong>", "</strong>",
        "<span>日本</span>", "<img src=x onerror=alert(1)>", "<em>em</em> <u>u</u>", "< b >", "<<b>>", "<blockquote>q",
        "<html><body>hi</body></html>", "<sub>2</sub><sup>3</sup>", "<h6></h6>", "<iframe>", "<footer>end</footer>"]

DIGITS = ["0", "7", "42", "123", "2024", "1234567890", "3.14", "-5", "+81", "1e10", "100%", "$9.99",
          "12:34:56", "2026-12-05", "(555) 123-4567", "0.000001", "１２３", "Ⅻ", "½ ¾", "١٢٣"]

MIXED = ["Hello 世界", "日本語とEnglishのmix", "Привет мир", "Γειά σου", "שלום", "مرحبا", "नमस्ते", "안녕하세요",
         "你好，世界", "Tiếng Việt", "ภาษาไทย", "Ελληνικά and English", "東京Tokyo2020", "αβγ δεζ",
         "ÀÉÎÕÜ", "ß ẞ", "ﬁ ligature", "ＡＢＣ", "e\u0301 combining", "Ω≈ç√∫"]

EDGE = ["", "<bos>", "<eos>", "<pad>", "<unk>", "<0x41>", "<start_of_image>", "[multimodal]", "<unused0>",
        "\x00", "\x07 bell", "\x1b[31mred\x1b[0m", "\ufeffBOM", "\ufffd", "\U0001f600" * 5, "a" * 100,
        "ab" * 60, "." * 50, "-" * 40, "=" * 33, "__init__", "...", "!!!", "???", "¯\\_(ツ)_/¯", "\\n literal",
        "tab\\t", "\u2581", "\u2581\u2581 already", "▁hello"]


def tokenizer_strings() -> list[str]:
    """-> every string of the tokenizer fixture (English, Japanese, code, whitespace runs, emoji, HTML, digits, mixed
    scripts, edge cases), once each, in order."""
    texts = ENGLISH + JAPANESE + CODE + WHITESPACE + EMOJI + HTML + DIGITS + MIXED + EDGE
    texts += [f"{a} {b}" for a, b in zip(ENGLISH[:25], JAPANESE[:25])]
    texts += [f"{c}\n{e}" for c, e in zip(CODE[:15], EMOJI[:15])]
    return list(dict.fromkeys(texts))


LONG_TEXT = " ".join(
    f"Entry {i}: the {colour} box on shelf {i % 7} holds {i * 3} marbles, and the note beside it says "
    f"\"check again on day {i + 11}\"."
    for i, colour in enumerate(["red", "blue", "green", "amber", "violet", "grey", "white"] * 3))

MODEL_TEXTS = {  # name -> text; none seen in training (written here), short ones get all their attention maps
    "english": "The small robot painted the fence blue before the rain came.",
    "question": "Where did the librarian put the map of the old harbour?",
    "japanese": "今日はとても良い天気ですね。",
    "japanese_long": "駅前の小さなパン屋は、毎朝六時に焼きたてのクロワッサンを並べる。",
    "code": "def mean(xs):\n    return sum(xs) / len(xs)\n",
    "whitespace": "a    b\t\tc\n\n\nd          e",
    "emoji": "I 🧠 love 🍣 and ☕ in the morning 👋",
    "html": "<b>bold</b> and <i>italic</i> text",
    "digits": "In 2026, 17 of the 40 students scored 93 or more.",
    "mixed": "Hello 世界, Привет мир!",
    "repeat": "kite lamp oven frog kite lamp oven frog kite lamp",
    "long": LONG_TEXT,
}
FULL_LOGITS = ("english", "japanese", "code", "long")  # the texts whose last position keeps all 262,144 logits
LONG_ROWS = (520, 600, 660)  # query positions past the 512-token window whose attention rows the long text keeps
LONG_LAYERS = (0, 5)  # a local layer and a global one
