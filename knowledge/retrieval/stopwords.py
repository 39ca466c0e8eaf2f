"""Stopwords removed by the analyser: function words that carry no topic in English or Chinese."""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# English: the classic SMART/NLTK core and the question words agents start questions with...
ENGLISH_FUNCTION_WORDS = _words(
    """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each eg etc few for from
    further had has have having he her here hers herself him himself his how i ie if in into is it
    its itself just me might more most must my myself no nor not now of off on once only or other
    our ours ourselves out over own per same shall she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up upon very
    via vs was we were what when where which while who whom whose why will with within without would
    you your yours yourself yourselves
    """
)
# ...and request filler ("is there any information / are papers available on ...", "has anyone
# found whether it is possible ..."): words of the asking, not of the subject.
ENGLISH_QUESTION_FILLER = _words(
    """
    any anything something please tell know paper papers information available
    anyone anybody someone somebody possible possibly whether exist exists existing regarding
    concerning pertaining among around e.g i.e
    """
)
ENGLISH_STOPWORDS = ENGLISH_FUNCTION_WORDS | ENGLISH_QUESTION_FILLER

# Chinese: particles, pronouns, copulas and question words. Deliberately not a long list of
# "common" words (e.g. 使用, 任务): those are topics in a knowledge base about agents.
CHINESE_STOPWORDS = _words(
    """
    一个 一些 一种 上 下 与 且 个 中 为 为什么 为何 之 之一 也 了 于 什么 什么样 什麽 从 他 他们 以
    以及 们 会 但 但是 何 何地 何处 何时 你 你们 其 其中 内 几 几个 则 前 即 去 又 及 只 叫 可以
    可能 后 向 吗 吧 呀 呢 和 哪 哪一 哪一年 哪个 哪些 哪位 哪儿 哪年 哪里 啊 因为 因此 在 地 外 多久
    多少 她 她们 如何 如果 它 它们 对 将 就 已 已经 并 并且 应 应该 当 得 怎么 怎么样 怎样 我 我们 或
    或者 所 所以 所有 才 把 时 是 是否 曾 曾经 有 有的 来 正 正在 此 每 没 没有 用 由 的 着 等 等等
    给 而 而且 能 能否 自己 若 被 要 让 该 谁 过 还 这 这个 这些 这样 这种 这里 那 那个 那些 那样
    那种 那里 都
    """
)

STOPWORDS: frozenset[str] = ENGLISH_STOPWORDS | CHINESE_STOPWORDS

# Chinese question words are open-ended compounds (哪家, 哪几个, 几座, 几号球衣 -> 几号): a word that
# starts with one of these and is short is a question word, not a topic.
CHINESE_QUESTION_PREFIXES = ("哪", "几", "什么", "多少", "怎")
_QUESTION_WORD_MAX = 4
_NOT_QUESTION_WORDS = frozenset({"几何", "几内亚", "哪吒"})


def is_function_word(word: str) -> bool:
    """Stopwords without the English question filler (AnalyzerConfig.stopwords == "function")."""
    return word in ENGLISH_FUNCTION_WORDS or word in CHINESE_STOPWORDS or _is_chinese_question_word(word)


def is_stopword(word: str) -> bool:
    """Stopwords, plus short Chinese words that begin with a question prefix."""
    return word in STOPWORDS or _is_chinese_question_word(word)


def _is_chinese_question_word(word: str) -> bool:
    return (
        len(word) <= _QUESTION_WORD_MAX
        and word.startswith(CHINESE_QUESTION_PREFIXES)
        and not word.startswith(tuple(_NOT_QUESTION_WORDS))
    )
