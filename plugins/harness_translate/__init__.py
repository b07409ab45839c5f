"""Translate-test: questions translated into English before an English retriever or reader."""
