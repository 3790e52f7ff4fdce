"""Azure: storage account keys and Service Bus/Event Hubs keys inside connection strings
(`AccountKey=…;`, `SharedAccessKey=…;`), and Entra ID (Azure AD) client secrets, whose fourth
character is a digit followed by `Q~` (learn.microsoft.com "Configure Azure Storage connection
strings"; gitleaks rule azure-ad-client-secret; detect-secrets AzureStorageKeyDetector).
SAS tokens (`sig=…`) are caught by connection_string.py's query rule.
"""

from __future__ import annotations

import re

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import is_filler, is_placeholder

AZURE_CONNECTION_STRING_KEY = PatternRule(
    name="azure-connection-string-key",
    kind="azure-storage-key",
    pattern=r"(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)"
    r"\s{0,2}=\s{0,2}(?P<secret>[A-Za-z0-9+/]{20,200}={0,2})(?![A-Za-z0-9+/=])",
    flags=re.IGNORECASE,
    anchors=("accountkey", "sharedaccesskey", "primarykey", "secondarykey"),
    reference="learn.microsoft.com/azure/storage/common/storage-configure-connection-string; "
    "Service Bus 'SharedAccessKey' connection strings",
    reject=is_placeholder,
)

AZURE_AD_CLIENT_SECRET = PatternRule(
    name="azure-ad-client-secret",
    kind="azure-client-secret",
    pattern=r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
    anchors=("q~",),
    reference="gitleaks rule azure-ad-client-secret (Entra ID client secret format)",
    reject=is_filler,
)

RULES = (AZURE_CONNECTION_STRING_KEY, AZURE_AD_CLIENT_SECRET)
