"""The licenses GitHub's licenses API knows (``choosealicense.com``'s commonly used set).

Short licenses carry their full text; long ones (the GPL family, Apache, MPL, EPL) carry
their opening notice, which is what agents read them for (``partial`` in the ledger).
"""

from __future__ import annotations

from dataclasses import dataclass

from ancha.world.tools.github.models.wire import JSONDict, node_id, web_url


@dataclass(frozen=True, slots=True)
class License:
    key: str
    name: str
    spdx_id: str
    description: str
    permissions: tuple[str, ...]
    conditions: tuple[str, ...]
    limitations: tuple[str, ...]
    body: str
    featured: bool = False

    def simple(self, base: str) -> JSONDict:
        """``license-simple``."""
        return {"key": self.key, "name": self.name, "spdx_id": self.spdx_id, "url": f"{base}/licenses/{self.key}",
                "node_id": node_id("License", LICENSES.index(self) + 1)}

    def full(self, base: str) -> JSONDict:
        """``license``: ``GET /licenses/{license}``."""
        return {**self.simple(base), "html_url": f"{web_url(base)}/licenses/{self.key}",
                "description": self.description,
                "implementation": "Create a text file (typically named LICENSE or LICENSE.txt) in the root of "
                                  "your source code and copy the text of the license into the file.",
                "permissions": list(self.permissions), "conditions": list(self.conditions),
                "limitations": list(self.limitations), "body": self.body, "featured": self.featured}


_OPEN = ("commercial-use", "modifications", "distribution", "private-use")
_COPYLEFT = ("include-copyright", "document-changes", "disclose-source", "same-license")
_MIT = """MIT License

Copyright (c) [year] [fullname]

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""
_UNLICENSE = """This is free and unencumbered software released into the public domain.

Anyone is free to copy, modify, publish, use, compile, sell, or
distribute this software, either in source code form or as a compiled
binary, for any purpose, commercial or non-commercial, and by any
means.

For more information, please refer to <https://unlicense.org>
"""

LICENSES: list[License] = [
    License("agpl-3.0", "GNU Affero General Public License v3.0", "AGPL-3.0",
            "Permissions of this strongest copyleft license are conditioned on making available complete source "
            "code of licensed works and modifications, which include larger works using a licensed work, under "
            "the same license.", (*_OPEN, "patent-use"), (*_COPYLEFT, "network-use-disclose"),
            ("liability", "warranty"), "GNU AFFERO GENERAL PUBLIC LICENSE\nVersion 3, 19 November 2007\n"),
    License("apache-2.0", "Apache License 2.0", "Apache-2.0",
            "A permissive license whose main conditions require preservation of copyright and license notices.",
            (*_OPEN, "patent-use"), ("include-copyright", "document-changes"),
            ("trademark-use", "liability", "warranty"),
            "Apache License\nVersion 2.0, January 2004\nhttp://www.apache.org/licenses/\n", featured=True),
    License("bsd-2-clause", 'BSD 2-Clause "Simplified" License', "BSD-2-Clause",
            "A permissive license that comes in two variants, the BSD 2-Clause and BSD 3-Clause.", _OPEN,
            ("include-copyright",), ("liability", "warranty"), "BSD 2-Clause License\n\nCopyright (c) [year], "
            "[fullname]\n"),
    License("bsd-3-clause", 'BSD 3-Clause "New" or "Revised" License', "BSD-3-Clause",
            "A permissive license similar to the BSD 2-Clause License, but with a 3rd clause that prohibits "
            "others from using the name of the copyright holder or its contributors to promote derived products "
            "without written consent.", _OPEN, ("include-copyright",), ("liability", "warranty"),
            "BSD 3-Clause License\n\nCopyright (c) [year], [fullname]\n"),
    License("bsl-1.0", "Boost Software License 1.0", "BSL-1.0",
            "A simple permissive license only requiring preservation of copyright and license notices for source "
            "(and not binary) distribution.", _OPEN, ("include-copyright--source",), ("liability", "warranty"),
            "Boost Software License - Version 1.0 - August 17th, 2003\n"),
    License("cc0-1.0", "Creative Commons Zero v1.0 Universal", "CC0-1.0",
            "The Creative Commons CC0 Public Domain Dedication waives copyright interest in a work you've created "
            "and dedicates it to the world-wide public domain.", _OPEN, (),
            ("liability", "trademark-use", "patent-use", "warranty"), "Creative Commons Legal Code\n\nCC0 1.0 "
            "Universal\n"),
    License("epl-2.0", "Eclipse Public License 2.0", "EPL-2.0",
            "This commercially-friendly copyleft license provides the ability to commercially license binaries.",
            (*_OPEN, "patent-use"), ("disclose-source", "include-copyright", "same-license"),
            ("liability", "warranty"), "Eclipse Public License - v 2.0\n"),
    License("gpl-2.0", "GNU General Public License v2.0", "GPL-2.0",
            "The GNU GPL is the most widely used free software license and has a strong copyleft requirement.",
            _OPEN, _COPYLEFT, ("liability", "warranty"),
            "GNU GENERAL PUBLIC LICENSE\nVersion 2, June 1991\n"),
    License("gpl-3.0", "GNU General Public License v3.0", "GPL-3.0",
            "Permissions of this strong copyleft license are conditioned on making available complete source code "
            "of licensed works and modifications, which include larger works using a licensed work, under the "
            "same license.", (*_OPEN, "patent-use"), _COPYLEFT, ("liability", "warranty"),
            "GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007\n", featured=True),
    License("lgpl-2.1", "GNU Lesser General Public License v2.1", "LGPL-2.1",
            "Primarily used for software libraries, the GNU LGPL requires that derived works be licensed under "
            "the same license, but works that only link to it do not fall under this restriction.", _OPEN,
            ("include-copyright", "disclose-source", "document-changes", "same-license--library"),
            ("liability", "warranty"), "GNU LESSER GENERAL PUBLIC LICENSE\nVersion 2.1, February 1999\n"),
    License("mit", "MIT License", "MIT",
            "A short and simple permissive license with conditions only requiring preservation of copyright and "
            "license notices.", _OPEN, ("include-copyright",), ("liability", "warranty"), _MIT, featured=True),
    License("mpl-2.0", "Mozilla Public License 2.0", "MPL-2.0",
            "Permissions of this weak copyleft license are conditioned on making available source code of "
            "licensed files and modifications of those files under the same license.", (*_OPEN, "patent-use"),
            ("disclose-source", "include-copyright", "same-license--file"),
            ("liability", "trademark-use", "warranty"), "Mozilla Public License Version 2.0\n"),
    License("unlicense", "The Unlicense", "Unlicense",
            "A license with no conditions whatsoever which dedicates works to the public domain.", _OPEN, (),
            ("liability", "warranty"), _UNLICENSE),
]
BY_KEY = {license.key: license for license in LICENSES}
