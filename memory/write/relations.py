# ruff: noqa: RUF001  (relation words in six languages)
"""Who a fact is about: the people of a person's life that its words name ("my wife drives
a Corolla" does not update "I drive a Corolla", however alike the vectors).
"""

from __future__ import annotations

import re

# Whole words, lower case, with the inflected forms a short fact uses.
LISTED = """
    wife husband partner girlfriend boyfriend fiance fiancee fiancé fiancée spouse
    sister sisters brother brothers mother mom mum father dad parents parent
    son sons daughter daughters child children kid kids baby friend friends colleague
    colleagues coworker boss manager neighbour neighbor grandmother grandma grandfather
    grandpa grandparents aunt uncle cousin niece nephew roommate flatmate
    ehefrau ehemann freundin freund freunde partnerin schwester schwestern bruder brüder
    mutter mama vater papa eltern sohn tochter kinder kollege kollegin chef chefin
    nachbar nachbarin oma opa großeltern tante onkel cousine neffe nichte
    épouse époux mari copine copain sœur soeur sœurs frère frères mère maman père
    fils fille filles enfants ami amie amis collègue patron patronne voisin voisine
    grand-mère grand-père tante oncle neveu nièce
    esposa esposo marido novia novio hermana hermano hermanos madre mamá padre papá
    padres hijo hija hijos amigo amiga amigos colega jefe jefa vecino vecina abuela
    abuelo tía tío primo prima sobrino sobrina
    moglie marito fidanzata fidanzato sorella fratello madre padre genitori figlio
    figlia figli amico amica collega capo vicino nonna nonno zia zio cugino cugina
    жена жены жене жену женой муж мужа мужу мужем сестра сестры сестре сестру сестрой
    брат брата брату братом мать матери мама мамы маме маму мамой отец отца отцу
    папа папы папе родители родителей сын сына сыну дочь дочери дети детей друг друга
    другу подруга подруги подруге коллега коллеги начальник начальника сосед соседа
    соседка бабушка бабушки дедушка дедушки тётя тетя дядя
    esposa marido namorada namorado irmã irmãs irmão irmãos mãe pai pais filho filha filhos
    amigo amiga amigos colega chefe vizinho vizinha avó avô tia tio primo prima sobrinho
    sobrinha
    vrouw echtgenoot echtgenote vriendin vriend vrienden zus zussen broer broers moeder
    vader ouders zoon zonen dochter dochters kinderen collega baas buurman buurvrouw oma
    opa tante oom neef
"""
WORDS = frozenset(LISTED.split())
# Japanese and Chinese write no spaces between words: these are found inside the text.
JAPANESE_LISTED = (
    "妻 旦那 主人 彼女 彼氏 姉 妹 兄 弟 母 父 両親 息子 娘 子供 友達 友人 同僚 上司 隣人 祖母 祖父"
)
CHINESE_LISTED = (
    "妻子 老婆 丈夫 老公 女朋友 男朋友 姐姐 妹妹 哥哥 弟弟 妈妈 母亲 爸爸 父亲 父母 儿子 女儿 "
    "孩子 朋友 同事 老板 邻居 奶奶 爷爷 外婆 外公 叔叔 阿姨 舅舅 姑姑"
)
INSIDE = tuple(JAPANESE_LISTED.split()) + tuple(CHINESE_LISTED.split())
WORD = re.compile(r"[\w'’-]+")


# "I am (a) father", "je suis père", "ich bin Mutter": what the speaker is, not who.
SPEAKERS_ROLE = re.compile(
    r"\b(?:i am|i'm|i’m|je suis|ich bin|soy|sono|sou|ik ben)"
    r"(?: (?:a|an|the|un|une|ein|eine|una|uno|um|uma|een))? ([\w-]+)"
)


def relations(text: str) -> frozenset[str]:
    """The relation words of ``text`` ("my sister's dog" -> {"sister"}), leaving out the
    one the speaker says they are ("I'm a father of two" -> {}: about the speaker)."""
    lower = text.lower()
    words = {word.removesuffix("'s").removesuffix("’s") for word in WORD.findall(lower)}
    own = set(SPEAKERS_ROLE.findall(lower))
    return frozenset(((words - own) & WORDS) | {word for word in INSIDE if word in text})


def about_other_people(new: str, known: str) -> bool:
    """Whether two facts name different people of the person's life (or one names someone
    and the other does not): then one cannot replace the other."""
    return relations(new) != relations(known)
