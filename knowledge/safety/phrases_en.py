"""English instruction-injection phrases, written in plain words for the `words` view.

Each pattern is a sequence of lower-case words separated by single spaces, as `views.words`
renders any text; `injection` compiles it for that view and, when it is long enough to be
unambiguous, without spaces for the `compact` view that defeats letter spacing.
"""

from __future__ import annotations

# Words that may sit between a verb and its object: "ignore all of your previous instructions".
FILLER = (
    r"(?:all|any|every|each|the|your|its|their|my|our|these|those|of|that|this|such|and|or|other|above|given|provided|"
    r"stated|listed|mentioned|received|current|default|prior|previous|earlier|preceding|foregoing|former|past|"
    r"old|original|initial|existing|system|safety|security|developer|developers|content|ethical|moral|openai|"
    r"anthropic|model|ai|assistant|s|you|were|have|been|got|told|instructions|so|far|before)"
)
# At least one of these must precede the object: it is what makes a phrase an override.
ANCHOR = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|all|every|your|system|safety|"
    r"developer|developers|existing|old|past|any prior|any previous)"
)
OBJECT = (
    r"(?:instructions?|instruction set|directions?|directives?|rules?|guidelines?|guidance|prompts?|system prompt|"
    r"system message|commands?|orders?|constraints?|restrictions?|limitations?|policies|policy|programming|"
    r"training|guardrails?|safeguards?|filters?|protocols?|principles|ethics|boundaries|prohibitions|persona|"
    r"messages|context|conversation|text|content|tasks?)"
)
STRONG_OBJECT = (
    r"(?:system prompt|system message|system instructions|guardrails?|safeguards?|programming|training|ethics|"
    r"safety (?:guidelines|rules|filters|protocols|measures|settings|policies|instructions)|content (?:policy|policies|"
    r"filters?)|moral (?:guidelines|constraints)|ethical (?:guidelines|constraints|principles))"
)
OVERRIDE_VERB = (
    r"(?:ignore|ignores|ignoring|disregard|disregards|disregarding|forget|forgets|forgetting|bypass|bypasses|bypassing|"
    r"override|overrides|overriding|overwrite|"
    r"overrule|nullify|discard|discarding|abandon|abandoning|neglect|set aside|setting aside|throw out|put aside|"
    r"ditch|unlearn|dismiss|circumvent|supersede|skip|drop|erase|wipe|clear out|delete)"
)
OBEY_VERB = r"(?:follow|following|obey|obeying|comply with|adhere to|respect|listen to|abide by|honor|honour|heed)"
NEGATION = r"(?:do not|don t|dont|never|stop|no longer|cease|refuse to|quit|must not|should not|shouldn t)"
ROGUE = (
    r"(?:dan|unrestricted|unfiltered|uncensored|unlimited|jailbroken|jailbreak|evil|rogue|amoral|unethical|"
    r"unbound|unchained|liberated|free from all|without (?:any )?(?:restrictions|limits|limitations|rules|filters|"
    r"guidelines|ethics|morals|censorship))"
)
LEAK_VERB = (
    r"(?:reveal|print|show|output|repeat|display|dump|leak|disclose|expose|share|recite|spell out|write out|"
    r"type out|paste|return|echo|copy|translate|summari[sz]e|tell me|give me|send me|list|provide|read back|"
    r"what (?:is|are|was|were))"
)
LEAK_OBJECT = (
    r"(?:your (?:(?:full|entire|complete|whole|exact|original|initial|hidden|secret|real|internal|system) )*"
    r"(?:system prompt|prompt|instructions|rules|guidelines|directives|configuration|system message|developer message|"
    r"pre ?prompt|context)|(?:the )?(?:initial|original|hidden|secret|internal|full|entire|complete|verbatim) "
    r"(?:system )?(?:prompt|instructions|system message|developer message)|(?:the )?system prompt (?:verbatim|word for "
    r"word|exactly|in full|in its entirety|above)|(?:the |all )?(?:text|words|everything|content|instructions|"
    r"messages|prompt) (?:above|before this|preceding this|prior to this)|(?:the )?(?:conversation|chat) history|"
    r"(?:all )?(?:previous|prior|earlier) messages)"
)

# (code, pattern) in the words view. Codes are stable; see `injection.MESSAGES`.
RULES: tuple[tuple[str, str], ...] = (
    ("injection.override", rf"{OVERRIDE_VERB} (?:{FILLER} ){{0,5}}?{ANCHOR} (?:{FILLER} ){{0,4}}?{OBJECT}"),
    ("injection.override", rf"{OVERRIDE_VERB} (?:{FILLER} ){{0,3}}?{STRONG_OBJECT}"),
    (
        "injection.override",
        rf"{OVERRIDE_VERB} (?:everything|anything|all|what) (?:{FILLER} ){{0,3}}?(?:above|before|earlier|previously|so far|"
        r"you (?:were|ve been|have been|had been) (?:told|given|taught|instructed|programmed))",
    ),
    ("injection.override", rf"{OVERRIDE_VERB} (?:the|all the|everything) (?:above|foregoing)"),
    (
        "injection.override",
        rf"{OVERRIDE_VERB} (?:the |this )?(?:user|customer|human)(?: s)? (?:actual |real |original )?(?:question|request|query|message|input|prompt)s?",
    ),
    (
        "injection.override",
        rf"{NEGATION} (?:{FILLER} ){{0,2}}?{OBEY_VERB} (?:{FILLER} ){{0,4}}?{ANCHOR} (?:{FILLER} ){{0,3}}?{OBJECT}",
    ),
    ("injection.override", r"(?:you (?:are|re) )?no longer (?:bound|restricted|limited|constrained|governed) by"),
    (
        "injection.override",
        rf"(?:previous|prior|above|earlier|preceding|former|original|old) (?:{FILLER} ){{0,2}}?{OBJECT} "
        r"(?:no longer|don t|do not|does not|doesn t|cease to|stop) (?:bind|binds|apply|applies|restrict|restricts|"
        r"govern|governs|hold|holds|count|matter)",
    ),
    (
        "injection.priority",
        r"(?:these|the following|this|below|my|new) (?:\w+ ){0,2}?(?:instructions?|rules?|directives?|message|note|text|"
        r"commands?|orders?) (?:take|takes|has|have|get|gets|now take|now takes) (?:absolute |top |the highest |highest |"
        r"full |top )?(?:precedence|priority)",
    ),
    (
        "injection.priority",
        r"(?:this|these|the following|my|the new|new) (?:\w+ ){0,2}?(?:instructions?|message|note|directive|text|update|"
        r"rules?) (?:supersedes?|overrides?|replaces?|trumps?|cancels?|invalidates?) (?:\w+ ){0,3}?(?:previous|prior|all|"
        r"any|your|earlier|original|system|existing|other)",
    ),
    (
        "injection.priority",
        r"(?:highest|top|maximum|absolute|critical|utmost) priority (?:instruction|directive|command|override|order|task|"
        r"system (?:instruction|message|update|notice))",
    ),
    ("injection.priority", r"(?:system|admin|administrator|developer|security|emergency|root|priority|god) override"),
    (
        "injection.priority",
        r"(?:updated|real|true|actual|revised|secret|hidden|additional) (?:system )?(?:instructions|directives|orders) "
        r"(?:for (?:you|the (?:ai|assistant|model|agent|llm)) )?(?:are|is|follow|below)",
    ),
    (
        "injection.identity",
        rf"you are (?:now|from now on|hereby|henceforth) (?:a |an |the |my |in |called |named )?(?:\w+ ){{0,3}}?{ROGUE}",
    ),
    (
        "injection.identity",
        r"you are no longer (?:an? |the )?(?:ai|assistant|ai assistant|language model|chatbot|bound|restricted|limited|"
        r"chatgpt|claude|gemini|required|subject|obligated)",
    ),
    (
        "injection.identity",
        r"from now on,? you (?:are|will be|ll be|act as|no longer|have no|can ignore|must ignore|shall ignore|"
        r"will ignore|are free|will respond as|will answer as|will only obey|only obey)",
    ),
    (
        "injection.identity",
        rf"(?:act|behave|respond|answer|reply|roleplay|role play|operate) as (?:if you (?:are|were) )?(?:an? |the )?"
        rf"(?:\w+ ){{0,2}}?{ROGUE}",
    ),
    (
        "injection.identity",
        rf"pretend (?:to be|that you are|that you re|you are|you re|you have|that you have) (?:an? )?(?:\w+ ){{0,3}}?"
        rf"(?:no (?:restrictions|rules|limits|filters|guidelines)|{ROGUE})",
    ),
    (
        "injection.identity",
        r"(?:god|jailbreak|jailbroken|dan|unrestricted|unfiltered|uncensored|evil|chaos|sudo|no limits?) mode "
        r"(?:is )?(?:now )?(?:enabled|activated|on|engaged|unlocked|active)",
    ),
    (
        "injection.identity",
        r"(?:enable|activate|enter|switch to|turn on|unlock|engage) (?:the )?(?:god|jailbreak|dan|unrestricted|"
        r"unfiltered|uncensored|evil|chaos|sudo|no limits?) mode",
    ),
    ("injection.identity", r"do anything now"),
    ("injection.identity", r"(?:you are|act as|become|called|named|as|you re) dan (?:which|who|mode|and|an?|the)"),
    ("injection.identity", r"(?:stay|remain) in character|(?:never|don t|do not) break character"),
    (
        "injection.identity",
        r"(?:respond|answer|reply|act|operate|behave|speak|output|talk) (?:\w+ ){0,2}?(?:without|with no|free of|"
        r"free from) (?:any |all |your |the )?(?:ethical |moral |safety |content )?(?:restrictions|limitations|filters|"
        r"filtering|censorship|guidelines|rules|boundaries|constraints|safeguards|guardrails)",
    ),
    ("injection.prompt_leak", rf"{LEAK_VERB} (?:me |us )?(?:\w+ ){{0,3}}?{LEAK_OBJECT}"),
    ("injection.prompt_leak", r"starting with (?:the (?:words?|phrase) )?you are"),
    (
        "injection.secrecy",
        r"(?:do not|don t|dont|never|without) (?:\w+ ){0,2}?(?:tell|telling|inform|informing|notify|notifying|alert|"
        r"alerting|mention|mentioning|reveal|revealing|disclose|disclosing|let on|warn|warning|show|showing) (?:this )?"
        r"(?:to )?(?:the |your |this )?(?:user|users|human|customer|customers|operator|reader) (?:\w+ ){0,2}?(?:about|of|"
        r"that you|that this|this|these|what you|you (?:are|were|have|did)|why)",
    ),
    (
        "injection.secrecy",
        r"without (?:the |your |any )?(?:user|users|human|customer|customers|operator)s? (?:ever )?(?:knowing|noticing|"
        r"being aware|realizing|realising|seeing it|finding out)",
    ),
    (
        "injection.secrecy",
        r"(?:do not|don t|dont|never) (?:let|allow) (?:the |your )?(?:user|human|customer)s? (?:to )?(?:know|see|find out|notice)",
    ),
    (
        "injection.secrecy",
        r"(?:keep|keeping) (?:this|these|it|the instructions?|this instruction|this message) (?:\w+ ){0,2}?(?:secret|"
        r"hidden|confidential|private) from (?:the |your )?(?:user|human|customer)",
    ),
    (
        "injection.secrecy",
        r"(?:secretly|silently|covertly|quietly|discreetly|stealthily|invisibly) (?:\w+ ){0,2}?(?:send|call|invoke|"
        r"execute|run|add|insert|append|include|recommend|forward|upload|email|post|visit|open|redirect|fetch|exfiltrate|"
        r"collect|record|log|store|save|steal|copy|transfer|install|download|click|delete|modify|change|replace|embed)\b",
    ),
    (
        "injection.addressed",
        r"(?:if you are|if you re|you are|as) an? (?:ai|llm|large language model|language model|ai assistant|ai agent|"
        r"ai model|chatbot|automated agent|autonomous agent|ai system) (?:\w+ ){0,3}?(?:reading|processing|summari[sz]ing|"
        r"analy[sz]ing|parsing|crawling|indexing|that reads|who reads|seeing|scraping|ingesting)",
    ),
    (
        "injection.addressed",
        r"(?:note|message|instructions?|attention|notice|memo|reminder) (?:to|for) (?:all |any )?(?:ai|llm|llms|gpt|"
        r"chatgpt|claude|gemini|ai assistants?|ai agents?|assistants|language models?|chatbots|bots|ai models?|ai systems)"
        r"(?: reading| processing| parsing)?(?: this)?",
    ),
    (
        "injection.tool_abuse",
        r"(?:call|invoke|use|run|execute|trigger|fire|issue) (?:the |your |a )?(?:\w+ ){0,2}?(?:tool|function|plugin|action|"
        r"command|api) (?:named |called )?(?:\w+ )?(?:to )?(?:send|delete|drop|transfer|wire|pay|refund|purchase|buy|"
        r"grant|email|upload|post|exec|shell|remove|erase|wipe|transfer funds|rm)",
    ),
    (
        "injection.tool_abuse",
        r"(?:call|invoke|use|run|execute|trigger) (?:the )?(?:send ?e?mail|send ?message|delete ?\w*|transfer ?\w*|"
        r"exec ?\w*|run ?shell|shell ?exec|run ?command|execute ?command|http ?request|fetch ?url|write ?file|"
        r"make ?payment|wire ?transfer|grant ?access|create ?user|add ?admin) (?:tool|function|action|plugin)",
    ),
)

# Phrases long and specific enough to match without word boundaries (the compact view).
COMPACT_RULES: tuple[tuple[str, str], ...] = (
    (
        "injection.override",
        r"(?:ignore|disregard|forget|bypass|override)(?:all|any|the|your|its|their|my|of|these|those|andall)*"
        r"(?:previous|prior|above|earlier|preceding|original|initial|system|safety)(?:system)?"
        r"(?:instructions?|directions|directives|rules|guidelines|prompts?|constraints|restrictions|guardrails)",
    ),
    (
        "injection.override",
        r"(?:ignore|disregard|forget|bypass|override)(?:all|any|the|your|its|their)*(?:systemprompt|safetyguidelines|guardrails|programming)",
    ),
    (
        "injection.override",
        r"(?:ignore|disregard|forget)(?:everything|anything)(?:you(?:were|havebeen|vebeen|hadbeen))(?:told|given|taught|instructed|programmed)",
    ),
    ("injection.override", r"(?:ignore|disregard|forget)(?:everything|all)(?:above|beforethis|previously)"),
    ("injection.prompt_leak", r"startingwith(?:the)?(?:words?|phrase)?youare"),
    (
        "injection.prompt_leak",
        r"repeat(?:all)?(?:of)?(?:the)?(?:words|text|everything|content|instructions)(?:above|beforethis)",
    ),
    (
        "injection.identity",
        r"(?:developermode|godmode|jailbreakmode|danmode)(?:is)?(?:now)?(?:enabled|activated|on|unlocked)",
    ),
    ("injection.identity", r"doanythingnow"),
    ("injection.identity", r"youarenow(?:a|an|the)?(?:unrestricted|unfiltered|uncensored|jailbroken|dan)"),
    (
        "injection.prompt_leak",
        r"(?:reveal|print|show|output|repeat|display|dump|leak|disclose|tellme|giveme)(?:me)?(?:the|your)*"
        r"(?:full|entire|complete|original|initial|hidden|secret)*(?:systemprompt|initialprompt|initialinstructions|"
        r"originalinstructions|hiddeninstructions|systemmessage|developermessage)",
    ),
    ("injection.priority", r"(?:system|admin|administrator|developer|security|emergency)override"),
)
