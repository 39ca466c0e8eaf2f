"""Look-alike letters (Unicode's confusables, via confusable-homoglyphs) and traditional Chinese forms.

Only the detection views use these maps: a Cyrillic "а" in "ignоre" reads as Latin "a", and
"忽略之前的規則" reads like its simplified form, so one rule covers every spelling.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


def _is_cjk(code: int) -> bool:
    return 0x2E80 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3FFFF


@cache
def _confusables() -> dict[str, str]:
    """Non-ASCII characters Unicode lists as confusable with one ASCII letter or digit."""
    raw = json.loads((resources.files("confusable_homoglyphs") / "confusables.json").read_text(encoding="utf-8"))
    mapping: dict[str, str] = {}
    for char, homoglyphs in raw.items():
        if len(char) != 1 or char.isascii() or _is_cjk(ord(char)):
            continue
        targets = sorted({h["c"].lower() for h in homoglyphs if len(h["c"]) == 1 and h["c"].isascii()})
        letters = [t for t in targets if t.isalnum()]
        if letters:
            mapping[char] = letters[0]
    return mapping


def confusable_letter(char: str) -> str | None:
    return None if char.isascii() else _confusables().get(char)


# Traditional forms of the characters the Chinese rules use (the rules are written in simplified).
_TRADITIONAL = dict(
    zip(
        "規則們從這個為無視說將戶據傳鑰碼應該設開發輸顯現憶記對話條約請勿過統詞絕遺棄廢權僅員務轉寫讀標隱藏執調際響禁體責與並覆蓋後於層級優復錄聯繫網頁連結郵帳號給讓別當時麼還誰經機關鍵獲沒訪啟進訴複內語資刪賬審濾倫護欄歷環變剛預萬識總門聽義屬範圍絡雲實種帶",
        "规则们从这个为无视说将户据传钥码应该设开发输显现忆记对话条约请勿过统词绝遗弃废权仅员务转写读标隐藏执调际响禁体责与并覆盖后于层级优复录联系网页连结邮帐号给让别当时么还谁经机关键获没访启进诉复内语资删账审滤伦护栏历环变刚预万识总门听义属范围络云实种带",
        strict=True,
    )
)


def simplified(char: str) -> str:
    return _TRADITIONAL.get(char, char)
