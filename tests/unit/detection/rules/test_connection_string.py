"""Passwords in URLs and credentials in URL query parameters."""

from __future__ import annotations

import pytest
from rule_cases import B62, Case, check, fake, ids, neg, pos

from scrubber.detection.rules.connection_string import CONNECTION_STRING_PASSWORD, URL_QUERY_SECRET

PW = fake(B62 + "!#%^*-_", 20, "pw")
AT_PW = "f@" + fake(B62, 10, "at") + "*x"

AT_HASH = fake(B62, 6, "at") + "@T#" + fake(B62, 16, "hash")

CASES: list[Case] = [
    *[
        pos(CONNECTION_STRING_PASSWORD, f"DATABASE_URL={scheme}://app:{PW}@db.internal:5432/prod", PW, note=scheme)
        for scheme in ("postgres", "postgresql", "mysql", "mariadb", "mongodb+srv", "rediss", "amqps",
                       "mssql", "clickhouse", "sftp", "smtp", "https")
    ],
    pos(CONNECTION_STRING_PASSWORD, f"redis://:{PW}@cache:6379/0", PW, note="empty user"),
    pos(CONNECTION_STRING_PASSWORD, f"mysql://root:{AT_PW}@10.0.3.17:3306/app", AT_PW, note="@ in password"),
    pos(CONNECTION_STRING_PASSWORD, f"https://trent:{PW}@gitlab.com\nhttps://bob:{PW[::-1]}@github.com\n",
        PW, PW[::-1], note="git-credentials"),
    pos(CONNECTION_STRING_PASSWORD, f"a\\nhttps://u:{PW}@h.example\\n", PW, note="escaped line"),
    pos(CONNECTION_STRING_PASSWORD, f'  url: "postgres://svc:{PW}@pg.example:5432/db?sslmode=require"', PW),
    neg(CONNECTION_STRING_PASSWORD, "postgres://app:@db.internal/prod", note="empty password"),
    neg(CONNECTION_STRING_PASSWORD, "postgres://app:${DB_PASSWORD}@db/prod", note="reference"),
    neg(CONNECTION_STRING_PASSWORD, "http://localhost:8080/users/bob@example.com", note="port then path"),
    neg(CONNECTION_STRING_PASSWORD, "git@github.com:org/repo.git"),
    neg(CONNECTION_STRING_PASSWORD, "postgres://user:password@localhost/db", note="documentation"),
    pos(URL_QUERY_SECRET, f"GET /v1/data?access_token={fake(B62, 30, 'q')}&page=2", fake(B62, 30, "q")),
    pos(URL_QUERY_SECRET, f"/cb?token={fake(B62, 12, 'f')}#section", fake(B62, 12, "f"), note="fragment ends it"),
    pos(URL_QUERY_SECRET, f"https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig={fake(B62, 43, 'sig')}%3D",
        f"{fake(B62, 43, 'sig')}%3D", note="SAS"),
    neg(URL_QUERY_SECRET, "https://api.example.com/items?page_token=abc123def456&limit=10"),
    neg(URL_QUERY_SECRET, "https://example.com/?token=${TOKEN}"),
    pos(CONNECTION_STRING_PASSWORD, "https://wendy:" + AT_HASH + "@github.com", AT_HASH,
        note="raw @ and # inside the password"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_connection_string(case: Case) -> None:
    check(case)
