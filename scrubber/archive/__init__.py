"""Encrypted session archives in the age v1 format."""
