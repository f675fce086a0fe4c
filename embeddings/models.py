# Embedding runs, triplets and recommendations arrive with the embedding lab (issue 5).
