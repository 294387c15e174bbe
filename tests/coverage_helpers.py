"""Texts and tiny models of the tokenizer-coverage tests: Russian and Hindi sentences written for these tests, Latin
lines from Multi30k, tokenizers trained with or without the first two, and tiny T5 models that use them."""

from __future__ import annotations

from pathlib import Path

import pytest
from testing_utils import MULTI30K, read_gz_lines

#: Sentences written for these tests (the first is the pangram that holds all 33 letters of the alphabet).
RUSSIAN = [
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Моя сестра работает врачом в большой больнице.",
    "Вчера вечером мы долго гуляли по набережной.",
    "Учительница объяснила задачу ещё раз.",
    "Этот инженер построил мост через реку.",
    "Бабушка печёт пироги с капустой по воскресеньям.",
    "Дети играли в футбол во дворе до темноты.",
    "Он купил новый велосипед своему сыну.",
    "Наш сосед — известный музыкант и композитор.",
    "Зимой в деревне очень тихо и холодно.",
    "Она прочитала эту книгу за два дня.",
    "Журналистка задала министру неудобный вопрос.",
    "Поезд отправляется в семь часов утра.",
    "Мы встретились у входа в музей.",
    "Повар приготовил вкусный суп из грибов.",
    "Студенты сдают экзамены в июне.",
    "Медсестра помогла пожилому мужчине подняться.",
    "Художник нарисовал портрет своей жены.",
    "В библиотеке всегда много людей.",
    "Лётчик благополучно посадил самолёт.",
    "Директор школы выступил с короткой речью.",
    "Я не знаю, где он живёт сейчас.",
    "Река разлилась после сильных дождей.",
    "Программистка нашла ошибку в коде.",
    "Весной в саду цветут яблони и вишни.",
    "Кошка спит на подоконнике целый день.",
    "Адвокат защищал своего клиента в суде.",
    "Мы поедем на море следующим летом.",
    "Её брат служит в армии уже два года.",
    "Почтальон принёс письмо из Москвы.",
]

HINDI = [
    "मेरी बहन एक बड़े अस्पताल में डॉक्टर है।",
    "कल शाम हम नदी के किनारे टहलने गए।",
    "शिक्षिका ने सवाल दोबारा समझाया।",
    "इंजीनियर ने नदी पर एक पुल बनाया।",
    "दादी हर रविवार को स्वादिष्ट खाना बनाती हैं।",
    "बच्चे अंधेरा होने तक आँगन में खेलते रहे।",
    "उसने अपने बेटे के लिए नई साइकिल खरीदी।",
    "हमारे पड़ोसी एक प्रसिद्ध संगीतकार हैं।",
    "सर्दियों में गाँव बहुत शांत और ठंडा होता है।",
    "उसने यह किताब दो दिन में पढ़ ली।",
    "पत्रकार ने मंत्री से एक कठिन प्रश्न पूछा।",
    "रेलगाड़ी सुबह सात बजे छूटती है।",
    "हम संग्रहालय के दरवाज़े पर मिले।",
    "रसोइये ने मशरूम का सूप बनाया।",
    "छात्र जून में परीक्षा देते हैं।",
    "नर्स ने बूढ़े आदमी को उठने में मदद की।",
    "चित्रकार ने अपनी पत्नी का चित्र बनाया।",
    "पुस्तकालय में हमेशा बहुत लोग होते हैं।",
    "पायलट ने विमान को सुरक्षित उतारा।",
    "प्रधानाचार्य ने छोटा सा भाषण दिया।",
    "मुझे नहीं पता कि वह अब कहाँ रहता है।",
    "भारी बारिश के बाद नदी में बाढ़ आ गई।",
    "प्रोग्रामर ने कोड में गलती ढूँढ़ ली।",
    "वसंत में बगीचे में फूल खिलते हैं।",
    "बिल्ली पूरे दिन खिड़की पर सोती है।",
    "वकील ने अदालत में अपने मुवक्किल का बचाव किया।",
    "हम अगली गर्मियों में समुद्र के किनारे जाएँगे।",
    "उसका भाई दो साल से सेना में है।",
    "डाकिया दिल्ली से एक चिट्ठी लाया।",
    "किसान सुबह जल्दी खेत में काम करने जाता है।",
    "ओह, ऐसा ऊँचा घर हमने पहले कभी नहीं देखा था।",
    "आज मौसम अच्छा है, पर उसे दुःख है।",
]


def latin_lines(n: int = 1500) -> list[str]:
    """The first ``n`` English and ``n`` German lines of Multi30k's training set."""
    if not MULTI30K.is_dir():
        pytest.skip("../shared/data/multi30k is not there")
    return [line for lang in ("en", "de") for line in read_gz_lines(MULTI30K / f"train.{lang}.gz", n)]


def unigram(texts: list[str]):
    """A T5-style unigram tokenizer (NFKC, ``▁`` word starts, ``<unk>``) trained on ``texts``."""
    from mtkit.data.tokenizer import train_tokenizer

    return train_tokenizer(texts, vocab_size=1000, kind="unigram")


def tiny_t5(tokenizer, folder: Path) -> Path:
    """A 1-layer T5 with random weights and ``tokenizer``, saved in ``folder`` as ``from_pretrained`` expects."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    config = T5Config(
        vocab_size=len(tokenizer), d_model=32, d_ff=64, d_kv=8, num_layers=1, num_heads=2, dropout_rate=0.0,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    T5ForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
