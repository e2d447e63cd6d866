"""The four special tokens, at the same ids in every vocabulary of the package.

========  ==  ==============================================================
``<pad>``  0  fills short sequences up to the batch length; masked everywhere
``<bos>``  1  "beginning of sequence": the decoder's first input token
``<eos>``  2  "end of sequence": the model emits it to stop
``<unk>``  3  any token the vocabulary does not know
========  ==  ==============================================================

The data (vocabularies, batching) and decoding both read them from here.
"""

SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>", "<unk>")
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)
