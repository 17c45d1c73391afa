"""The browser app: the pages a person uses (chat, documents, memories, account, settings) and the
scripts and styles they load. Every page reads and writes through the same API integrations use."""
