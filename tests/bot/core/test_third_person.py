"""Facts said in the first person, rewritten about the person by name, language by language.

Each rule has a fact here that fails without it, and each language has facts its rules must
leave alone (None), so that they stay quoted rather than become a wrong sentence. The facts
are not those of benchmarks/reply_voice.py, which stays a check on facts no rule was
written against.
"""

# ruff: noqa: RUF001

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.core import (
    third_person_de,
    third_person_es,
    third_person_fr,
    third_person_it,
    third_person_ja,
    third_person_ru,
)

GERMAN = [
    ("Ich koche gern", "Alice kocht gern"),
    ("Ich warte jeden Morgen auf den Bus", "Alice wartet jeden Morgen auf den Bus"),
    ("Ich zeichne Comics", "Alice zeichnet Comics"),
    ("Ich sammle Münzen", "Alice sammelt Münzen"),
    ("Ich lächle oft", "Alice lächelt oft"),
    ("Ich ändre nichts", "Alice ändert nichts"),
    ("Ich rolle den Teig aus", "Alice rollt den Teig aus"),
    ("Ich tanze Tango", "Alice tanzt Tango"),
    ("Ich bin Lehrerin", "Alice ist Lehrerin"),
    ("Ich habe zwei Katzen", "Alice hat zwei Katzen"),
    ("Ich weiß viel über Vögel", "Alice weiß viel über Vögel"),
    ("Ich muss früh aufstehen", "Alice muss früh aufstehen"),
    ("Ich möchte nach Island reisen", "Alice möchte nach Island reisen"),
    ("Ich fahre einen alten Golf", "Alice fährt einen alten Golf"),
    ("Ich lese Krimis", "Alice liest Krimis"),
    ("Ich esse kein Fleisch", "Alice isst kein Fleisch"),
    ("Ich spreche Polnisch", "Alice spricht Polnisch"),
    ("Ich werde Ärztin", "Alice wird Ärztin"),
    ("Ich verlasse selten das Haus", "Alice verlässt selten das Haus"),
    ("Ich rauche nicht mehr", "Alice raucht nicht mehr"),
    ("Ich interessiere mich für Astronomie", "Alice interessiert sich für Astronomie"),
    ("Ich kaufe mir bald ein Auto", "Alice kauft sich bald ein Auto"),
    ("Meine Tochter heißt Lena", "Alices Tochter heißt Lena"),
    ("Meine alte Katze schläft viel", "Alices alte Katze schläft viel"),
    ("Meinem Bruder gehört ein Boot", "Alices Bruder gehört ein Boot"),
    # Whose "seinen"/"ihren" it would be says the person's gender, which the rules do not know.
    ("Ich liebe meinen Garten", None),
    ("Mein Bruder besucht mich oft", None),
    ("Meine ist blau", None),
    ("Ich denke oft an mich", None),
    ("Am Wochenende wandere ich", None),
    ("Ich Trottel", None),
    ("Ich hab's vergessen", None),
]
FRENCH = [
    ("Je cuisine tous les soirs", "Alice cuisine tous les soirs"),
    ("J'adore le ski", "Alice adore le ski"),
    ("J'aime le mot 'chat' aussi", "Alice aime le mot 'chat' aussi"),
    ("J’adore le ski", "Alice adore le ski"),
    ("Je dors peu", "Alice dort peu"),
    ("Je finis tard le vendredi", "Alice finit tard le vendredi"),
    ("Je veux apprendre le japonais", "Alice veut apprendre le japonais"),
    ("Je prends le métro", "Alice prend le métro"),
    ("Je mets des lunettes", "Alice met des lunettes"),
    ("Je vais à la piscine le lundi", "Alice va à la piscine le lundi"),
    ("J'ai trois frères", "Alice a trois frères"),
    ("Je suis végétarien", "Alice est végétarien"),
    ("Je connais bien Marseille", "Alice connaît bien Marseille"),
    ("Je déménagerai en mai", "Alice déménagera en mai"),
    ("Je ne suis pas marié", "Alice n'est pas marié"),
    ("Je ne mange plus de viande", "Alice ne mange plus de viande"),
    ("Je n'aime pas le froid", "Alice n'aime pas le froid"),
    ("Je m'intéresse à l'histoire", "Alice s'intéresse à l'histoire"),
    ("Je me lève tôt", "Alice se lève tôt"),
    ("Je me suis marié en 2015", "Alice s'est marié en 2015"),
    ("J'y vais souvent", "Alice y va souvent"),
    ("Mon frère s'appelle Hugo", "Le frère d'Alice s'appelle Hugo"),
    ("Mon ami vit à Rome", "L'ami d'Alice vit à Rome"),
    ("Mes voisins sont bruyants", "Les voisins d'Alice sont bruyants"),
    ("Mon vélo bleu est cassé", "Le vélo bleu d'Alice est cassé"),
    ("Mon yacht est amarré à Nice", "Le yacht d'Alice est amarré à Nice"),
    ("Je te remercie", None),
    ("Je vis avec ma copine", None),
    ("Mon chat me suit partout", None),
    ("Mon héros est Zidane", None),  # "le héros" but "l'hôtel": the spelling does not say
    ("Mon fils de dix ans joue au foot", None),
    ("Le samedi, je cours", None),
    ("Je pense souvent à moi", None),
]
SPANISH = [
    ("Canto en un coro", "Alice canta en un coro"),
    ("Escribo poemas", "Alice escribe poemas"),
    ("Bebo té verde", "Alice bebe té verde"),
    ("Vivo cerca del río", "Alice vive cerca del río"),
    ("Tengo tres gatos", "Alice tiene tres gatos"),
    ("Mantengo un blog de cocina", "Alice mantiene un blog de cocina"),
    ("Conduzco un taxi", "Alice conduce un taxi"),
    ("Sigo una dieta vegana", "Alice sigue una dieta vegana"),
    ("Construyo muebles", "Alice construye muebles"),
    ("Elijo siempre el tren", "Alice elige siempre el tren"),
    ("Soy profesora", "Alice es profesora"),
    ("Estoy jubilado", "Alice está jubilado"),
    ("Voy al gimnasio", "Alice va al gimnasio"),
    ("Juego al ajedrez", "Alice juega al ajedrez"),
    ("Prefiero la playa", "Alice prefiere la playa"),
    ("Yo hablo francés", "Alice habla francés"),
    ("No bebo alcohol", "Alice no bebe alcohol"),
    ("Ya no fumo", "Alice ya no fuma"),
    ("Nunca como pescado", "Alice nunca come pescado"),
    ("Yo como pescado", "Alice come pescado"),
    ("Me llamo Carmen", "Alice se llama Carmen"),
    ("Me acuesto tarde", "Alice se acuesta tarde"),
    ("Me gusta el teatro", "A Alice le gusta el teatro"),
    ("No me gustan las arañas", "A Alice no le gustan las arañas"),
    ("A mí me encanta la salsa", "A Alice le encanta la salsa"),
    ("Lo sé", "Alice lo sabe"),
    ("Mi hermano se llama Diego", "El hermano de Alice se llama Diego"),
    ("Mi abuela vive en Cádiz", "La abuela de Alice vive en Cádiz"),
    ("Mis hijos estudian en Madrid", "Los hijos de Alice estudian en Madrid"),
    ("Mis amigas son divertidas", "Las amigas de Alice son divertidas"),
    ("Mi padre es taxista", "El padre de Alice es taxista"),
    ("Mi problema es el tiempo", "El problema de Alice es el tiempo"),
    ("Mi canción favorita es Despacito", "La canción favorita de Alice es Despacito"),
    ("Mi moto es nueva", "La moto de Alice es nueva"),
    ("Mi coche verde es viejo", "El coche verde de Alice es viejo"),
    ("Como pescado", None),  # or "As fish ...": without "yo" the word does not say
    ("Cuando llueve leo", None),
    ("Pablo vive en Quito", None),
    ("Vivo con mi novio", None),
    ("Trabajo mucho porque estoy ahorrando", None),
    ("Mi lápiz es azul", None),  # neither -o nor -a: the gender is not in the word
    ("Mi casa de campo es grande", None),
    ("Mi alma gemela es Ana", None),  # "el alma", not "la alma"
    ("Mi hermano me llama cada día", None),
]
ITALIAN = [
    ("Lavoro in banca", "Alice lavora in banca"),
    ("Scrivo romanzi", "Alice scrive romanzi"),
    ("Dormo poco", "Alice dorme poco"),
    ("Capisco lo spagnolo", "Alice capisce lo spagnolo"),
    ("Sono architetto", "Alice è architetto"),
    ("Ho un cane", "Alice ha un cane"),
    ("Vado al lavoro in bici", "Alice va al lavoro in bici"),
    ("Faccio nuoto", "Alice fa nuoto"),
    ("Voglio visitare il Giappone", "Alice vuole visitare il Giappone"),
    ("Vengo da Bari", "Alice viene da Bari"),
    ("Io insegno matematica", "Alice insegna matematica"),
    ("Anche io suono il piano", "Alice suona anche il piano"),
    ("Spesso vado a teatro", "Alice va spesso a teatro"),
    ("Non bevo caffè", "Alice non beve caffè"),
    ("Mi chiamo Giulia", "Alice si chiama Giulia"),
    ("Mi alzo alle sei", "Alice si alza alle sei"),
    ("Mi sono trasferito a Bologna", "Alice si è trasferito a Bologna"),
    ("Mi piace la pizza", "Ad Alice piace la pizza"),
    ("Non mi piacciono i film horror", "Ad Alice non piacciono i film horror"),
    ("A me piace sciare", "Ad Alice piace sciare"),
    ("Ci vado ogni estate", "Alice ci va ogni estate"),
    ("Il mio gatto si chiama Birba", "Il gatto di Alice si chiama Birba"),
    ("Mia sorella vive a Parigi", "La sorella di Alice vive a Parigi"),
    ("I miei nonni abitano in Sicilia", "I nonni di Alice abitano in Sicilia"),
    ("Il mio amico è cuoco", "L'amico di Alice è cuoco"),
    ("La mia amica è pittrice", "L'amica di Alice è pittrice"),
    ("Il mio zaino è blu", "Lo zaino di Alice è blu"),
    ("I miei studenti sono bravi", "Gli studenti di Alice sono bravi"),
    ("Le mie figlie studiano a Pisa", "Le figlie di Alice studiano a Pisa"),
    ("Abitiamo a Genova", None),
    ("Anche io non fumo", None),
    ("Vivo con mio marito", None),
    ("Marco lavora a Roma", None),
    ("Quando piove leggo", None),
    ("Il mio cane mi segue", None),
    ("Il mio amico di Roma è medico", None),
]
RUSSIAN = [
    ("Я читаю детективы", "Alice читает детективы"),
    ("Я гуляю с собакой", "Alice гуляет с собакой"),
    ("Я танцую сальсу", "Alice танцует сальсу"),
    ("Я умею вязать", "Alice умеет вязать"),
    ("Я говорю по-французски", "Alice говорит по-французски"),
    ("Я пишу стихи", "Alice пишет стихи"),
    ("Я хожу в спортзал", "Alice ходит в спортзал"),
    ("Я живу в Томске", "Alice живёт в Томске"),
    ("Я хочу собаку", "Alice хочет собаку"),
    ("Я занимаюсь плаванием", "Alice занимается плаванием"),
    ("Я учусь в колледже", "Alice учится в колледже"),
    ("Я боюсь высоты", "Alice боится высоты"),
    ("Я не пью кофе", "Alice не пьёт кофе"),
    ("Я больше не курю", "Alice больше не курит"),
    ("Я очень люблю кошек", "Alice очень любит кошек"),
    ("Я программист", "Alice программист"),
    ("Я родилась в Туле", "Alice родилась в Туле"),
    ("Я с ней работаю", None),
    ("Я с ней спорю", None),  # a verb the rules do not know, after a first word that is none
    ("Я работаю и учусь", None),
    ("Я везу детей в школу", None),
    ("Я люблю мою работу", None),
    ("Я скучаю по моей маме", None),
    ("Моя дочь учится в школе", None),
    ("Меня зовут Олег", None),
]

JAPANESE = [
    ("僕はギターを弾きます", "Aliceさんはギターを弾きます"),
    ("私の猫はタマです", "Aliceさんの猫はタマです"),
    ("わたしも寿司が好きです", "Aliceさんも寿司が好きです"),
    ("私が幹事です", "Aliceさんが幹事です"),
    ("私は私の母と住んでいます", None),  # a second "my" would need more than the name
    ("私たちは大阪に住んでいます", None),  # "we"
    ("寿司が好きです", None),  # no subject said: maybe not about the person
    ("私", None),
]


@pytest.mark.parametrize(
    ("about", "fact", "expected"),
    [
        *((third_person_de.about, fact, expected) for fact, expected in GERMAN),
        *((third_person_fr.about, fact, expected) for fact, expected in FRENCH),
        *((third_person_es.about, fact, expected) for fact, expected in SPANISH),
        *((third_person_it.about, fact, expected) for fact, expected in ITALIAN),
        *((third_person_ru.about, fact, expected) for fact, expected in RUSSIAN),
        *((third_person_ja.about, fact, expected) for fact, expected in JAPANESE),
    ],
)
def test_a_fact_is_about_the_person_or_left_to_be_quoted(
    about: Callable[[str, str], str | None], fact: str, expected: str | None
) -> None:
    assert about(fact, "Alice") == expected


@pytest.mark.parametrize(
    ("about", "fact", "name", "expected"),
    [
        (
            third_person_de.about,
            "Mein Sohn studiert in Graz",
            "Klaus",
            "Klaus' Sohn studiert in Graz",
        ),
        (
            third_person_fr.about,
            "Ma fille habite à Lille",
            "Paul",
            "La fille de Paul habite à Lille",
        ),
        (third_person_it.about, "Mi piace la pizza", "Marco", "A Marco piace la pizza"),
    ],
)
def test_the_name_is_spelt_as_its_sounds_want(
    about: Callable[[str, str], str | None], fact: str, name: str, expected: str
) -> None:
    assert about(fact, name) == expected
