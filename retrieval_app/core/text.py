"""Full-text search, one configuration for every table and query: English stemming and stopwords."""

TEXT_SEARCH_CONFIG = "english"
