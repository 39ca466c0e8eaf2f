"""Personal data: e-mail, phones, Chinese resident IDs (checksum), card numbers (Luhn), each validated."""

from __future__ import annotations

from knowledge.safety.personal import valid_card, valid_resident_id
from tests.safety.helpers import described


def test_personal_e_mail_is_medium_but_own_reserved_and_git_addresses_are_not() -> None:
    text = "jane.doe@gmail.com, support@evergreen.example.com, user@example.com, git@github.com:org/repo"
    assert described(text) == [("personal_data.email", "medium", "jane.doe@gmail.com")]


def test_phone_numbers_international_chinese_mobile_landline_and_us() -> None:
    text = "call +44 7911 123456 or 13800138000 or (415) 555-2671 or 010-62345678"
    assert [e for _, _, e in described(text)] == ["+44 7911 123456", "13800138000", "(415) 555-2671", "010-62345678"]
    assert {s for _, s, _ in described(text)} == {"medium"}


def test_numbers_that_only_look_like_phones_are_not_reported() -> None:
    assert described("version 2026-08-28, 1,888 tokens, host 192.168.100.200, 400-820-8820 hotline") == []


def test_resident_ids_need_a_real_region_date_and_check_character() -> None:
    assert valid_resident_id("11010519491231002X")
    assert not valid_resident_id("110105194912310021")  # wrong check character
    assert not valid_resident_id("990105194912310028")  # no such province
    assert not valid_resident_id("110105194902300023")  # 30 February
    assert described("ID 11010519491231002X, typo 110105194912310021") == [
        ("personal_data.cn_resident_id", "high", "11010519491231002X")
    ]


def test_card_numbers_need_luhn_an_issuer_and_are_not_published_test_numbers() -> None:
    assert valid_card("4539148803436467")
    assert not valid_card("4539148803436468")  # Luhn fails
    assert not valid_card("4242424242424242")  # Stripe's documented test card
    assert not valid_card("1700000000000")  # a timestamp, no issuer
    assert described("card 4539 1488 0343 6467, test 4242 4242 4242 4242") == [
        ("personal_data.payment_card", "high", "4539 1488 0343 6467")
    ]
