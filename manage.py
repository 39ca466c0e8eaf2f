#!/usr/bin/env python
"""Django's command-line utility for Evergreen."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evergreen_site.settings.base")
    from django.core.management import execute_from_command_line  # noqa: PLC0415  # after the settings variable

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
