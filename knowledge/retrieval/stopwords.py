"""Stopwords removed by the analyser: function words that carry no topic in English or Chinese."""

from __future__ import annotations

# English: the classic SMART/NLTK core plus the question words agents start questions with.
# Kept short on purpose: content words like "flow" or "model" must stay searchable.
ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "might", "more", "most", "must", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "shall", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "upon", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "within", "without", "would", "you", "your", "yours", "yourself", "yourselves", "etc", "ie", "eg", "vs", "via", "per"]
)

# Chinese: particles, pronouns, copulas and question words. Deliberately not a long list of
# "common" words (e.g. 使用, 任务): those are topics in a knowledge base about agents.
CHINESE_STOPWORDS: frozenset[str] = frozenset(
    ["的", "地", "得", "了", "着", "过", "是", "在", "和", "与", "及", "或", "而", "且", "并", "但", "也", "都", "就", "又", "还", "才", "只", "被", "把", "将", "对", "从", "向", "于", "由", "以", "为", "之", "其", "此", "这", "那", "这个", "那个", "这些", "那些", "这里", "那里", "这样", "那样", "这种", "那种", "一个", "一种", "一些", "有", "有的", "没有", "没", "个", "们", "我", "你", "他", "她", "它", "我们", "你们", "他们", "她们", "它们", "自己", "吗", "呢", "吧", "啊", "呀", "哪", "哪个", "哪些", "哪里", "哪儿", "哪位", "哪一", "哪一年", "哪年", "何", "何时", "何处", "何地", "谁", "什么", "什么样", "什麽", "怎么", "怎样", "怎么样", "如何", "为什么", "为何", "多少", "几", "几个", "多久", "是否", "能否", "可以", "可能", "会", "能", "要", "应", "应该", "该", "等", "等等", "即", "则", "若", "如果", "因为", "所以", "因此", "但是", "而且", "并且", "或者", "以及", "其中", "之一", "当", "给", "让", "叫", "用", "来", "去", "上", "下", "中", "内", "外", "时", "后", "前", "曾", "曾经", "已", "已经", "正", "正在", "所", "所有", "每"]
)

STOPWORDS: frozenset[str] = ENGLISH_STOPWORDS | CHINESE_STOPWORDS

# Chinese question words are open-ended compounds (哪家, 哪几个, 几座, 几号球衣 -> 几号): a word that
# starts with one of these and is short is a question word, not a topic.
CHINESE_QUESTION_PREFIXES = ("哪", "几", "什么", "多少", "怎")
_QUESTION_WORD_MAX = 4


def is_stopword(word: str) -> bool:
    """Stopwords, plus short Chinese words that begin with a question prefix."""
    if word in STOPWORDS:
        return True
    return len(word) <= _QUESTION_WORD_MAX and word.startswith(CHINESE_QUESTION_PREFIXES)
