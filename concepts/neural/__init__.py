"""The paper's per-concept neural extractor and its training schemes (Table 3). Pure: numpy and torch.

- :mod:`.features`: problems as bags of words over a vocabulary; embedding rows from word vectors.
- :mod:`.network`: the network (embedding 300 -> 60 sigmoid -> 60 sigmoid -> 1 sigmoid), R copies
  trained side by side (rounds are a batch dimension).
- :mod:`.schemes`: train/test splits and the phases of each training scheme.
- :mod:`.experiment`: R rounds per concept and scheme, FN/FP ratios, and the extractor that
  suggests labels.
"""
